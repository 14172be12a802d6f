/**
 * The words of the %%cep language, kept in step with workbench/language/cep.lark.
 *
 * tests/extensions/test_keywords.py reads the string literals of these arrays and compares them with
 * the grammar (and with the compiler's annotation list), so keep every entry a plain string literal.
 */

/** Structural keywords: schemas, sequences (Flink CEP), reaction groups (Prova), aggregates. */
export const KEYWORDS: readonly string[] = [
  'event',
  'sequence',
  'group',
  'receive',
  'partition',
  'by',
  'within',
  'of',
  'previous',
  'begin',
  'next',
  'followed',
  'any',
  'where',
  'until',
  'times',
  'more',
  'one',
  'optional',
  'greedy',
  'consecutive',
  'allow',
  'combinations',
  'gaps',
  'no',
  'skip',
  'to',
  'past',
  'first',
  'last',
  'fail',
  'timeouts',
  'flink',
  'order',
  'max',
  'partial',
  'matches',
  'none',
  'aggregate',
  'including',
  'current',
  'measures',
  'subset',
  // alternation and permutation of stages: (a next b) | c, permute(a, b, c)
  'permute',
  'emit',
  'into',
  'on',
  'once',
  'const',
  'state',
  'instance',
  'at',
  'with',
  'as',
  // sliding windows in conditions: avg(e.price over last 5min), count(e over last 100 events)
  'over',
  'events',
  'session',
  // leading and standalone absence: begin every not hb for 30s
  'every',
  // field types in `event login(user: str, n: int)` declarations
  'str',
  'int',
  'float',
  'bool',
  'number'
];

/** Keywords of the condition expressions (a restricted subset of Python). */
export const OPERATOR_WORDS: readonly string[] = [
  'and',
  'or',
  'not',
  'in',
  'is',
  'if',
  'else',
  'for',
  'lambda'
];

/** Constant names the condition evaluator knows (Python's); not grammar keywords. */
export const CONSTANTS: readonly string[] = ['True', 'False', 'None'];

/**
 * Reaction-group annotations (Prova), written `@name`: `@and` / `@or` open a group block (grammar);
 * the rest are the compiler's tables for channels, exits and initiators.
 */
export const ANNOTATIONS: readonly string[] = [
  'and',
  'or',
  'not',
  'stop',
  'id',
  'pause',
  'resume',
  'paused',
  'optional',
  'count',
  'size',
  'timer',
  'hop',
  'timeout',
  'vars',
  'after',
  'collect',
  'counts',
  'timeout_channel',
  'where',
  'template'
];

/** Units a duration literal may carry: `250ms`, `10s`, `10 sec`, `5min`, `1h`, `3d`. */
export const DURATION_UNITS: readonly string[] = ['ms', 's', 'sec', 'min', 'h', 'd'];

/** What starts a comment that runs to the end of the line. */
export const LINE_COMMENT = '#';
