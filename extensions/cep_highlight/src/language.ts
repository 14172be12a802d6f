/**
 * A CodeMirror 6 stream language for %%cep cells and .cep files.
 *
 * Every token gets a `cep-tok-*` class (see style/base.css), coloured with JupyterLab's theme
 * variables, so the highlighting follows the light, dark and high-contrast themes.
 */
import {
  LanguageSupport,
  StreamLanguage,
  StringStream,
  syntaxHighlighting
} from '@codemirror/language';
import { EditorView } from '@codemirror/view';
import { Tag, tagHighlighter, tags } from '@lezer/highlight';

import {
  ANNOTATIONS,
  CONSTANTS,
  DURATION_UNITS,
  KEYWORDS,
  LINE_COMMENT,
  OPERATOR_WORDS
} from './lexicon.js';

/** Tokenizer state: where we are relative to the `%%cep` line and the last token. */
interface ICepState {
  /** A non-blank token has been read (the `%%cep` line can only come first). */
  started: boolean;
  /** The current line is the `%%cep ...` magic line. */
  inMagicLine: boolean;
  /** The previous token was `.`, so a word is a field name, not a keyword. */
  afterDot: boolean;
}

const keywords = new Set(KEYWORDS);
const operatorWords = new Set(OPERATOR_WORDS);
const constants = new Set(CONSTANTS);
const annotations = new Set(ANNOTATIONS);

const WORD_BOUNDARY = '(?![A-Za-z_0-9])';
const units = [...DURATION_UNITS].sort((a, b) => b.length - a.length).join('|');
const DURATION = new RegExp(`^\\d+(\\.\\d+)?\\s?(${units})${WORD_BOUNDARY}`);
const NUMBER = /^(\d+\.(?!\.)\d*|\.\d+|\d+)([eE][+-]?\d+)?/;
const WORD = /^[A-Za-z_][A-Za-z_0-9]*/;
const OPERATOR = /^(\*\*|\/\/|==|!=|<=|>=|\.\.|<<|[-+*/%<>=:|])/;
const MAGIC = /^%%cep(?![A-Za-z_0-9])/;

/** Token names of the tokenizer, mapped to highlighting tags. */
const durationTag = Tag.define(tags.number);
const optionTag = Tag.define(tags.attributeName);
const TOKEN_TABLE: { [name: string]: Tag } = {
  magic: tags.processingInstruction,
  option: optionTag,
  keyword: tags.keyword,
  operatorKeyword: tags.operatorKeyword,
  atom: tags.atom,
  annotation: tags.annotation,
  duration: durationTag,
  number: tags.number,
  string: tags.string,
  comment: tags.lineComment,
  operator: tags.operator,
  name: tags.variableName,
  property: tags.propertyName,
  bracket: tags.bracket,
  punctuation: tags.punctuation,
  error: tags.invalid
};

/** The CSS class each tag gets; styled in style/base.css. */
export const cepHighlighter = tagHighlighter([
  { tag: tags.processingInstruction, class: 'cep-tok-magic' },
  { tag: optionTag, class: 'cep-tok-option' },
  { tag: [tags.keyword, tags.operatorKeyword], class: 'cep-tok-keyword' },
  { tag: tags.atom, class: 'cep-tok-atom' },
  { tag: tags.annotation, class: 'cep-tok-annotation' },
  { tag: durationTag, class: 'cep-tok-duration' },
  { tag: tags.number, class: 'cep-tok-number' },
  { tag: tags.string, class: 'cep-tok-string' },
  { tag: tags.lineComment, class: 'cep-tok-comment' },
  { tag: tags.operator, class: 'cep-tok-operator' },
  { tag: tags.variableName, class: 'cep-tok-name' },
  { tag: tags.propertyName, class: 'cep-tok-property' },
  { tag: [tags.bracket, tags.punctuation], class: 'cep-tok-punctuation' },
  { tag: tags.invalid, class: 'cep-tok-error' }
]);

/** Reads a quoted string or name whose opening quote is next; unterminated ones are errors. */
function quoted(stream: StringStream, quote: string, token: string): string {
  stream.next();
  let ch: string | void;
  while ((ch = stream.next()) !== undefined) {
    if (ch === '\\' && quote !== '`') {
      stream.next();
    } else if (ch === quote) {
      return token;
    }
  }
  return 'error';
}

/** Tokens of the rest of the magic line: `%%cep NAME [-o VAR] [VAR <<] ...`. */
function magicLineToken(stream: StringStream): string {
  if (stream.match(/^--?[A-Za-z][\w-]*/)) {
    return 'option';
  }
  if (stream.match('<<')) {
    return 'operator';
  }
  if (stream.match(NUMBER)) {
    return 'number';
  }
  const ch = stream.peek();
  if (ch === '"' || ch === "'") {
    return quoted(stream, ch, 'string');
  }
  stream.eatWhile(/\S/);
  return 'name';
}

/** Tokens of the language itself. */
function bodyToken(stream: StringStream, state: ICepState): string {
  if (stream.match(LINE_COMMENT)) {
    stream.skipToEnd();
    return 'comment';
  }
  if (stream.match(/^[rRbBuU](?=['"])/, false)) {
    stream.next();
    return quoted(stream, stream.peek() as string, 'string');
  }
  const ch = stream.peek() as string;
  if (ch === '"' || ch === "'") {
    return quoted(stream, ch, 'string');
  }
  if (ch === '`') {
    return quoted(stream, ch, 'name');
  }
  if (ch === '@') {
    stream.next();
    const name = stream.match(WORD) as RegExpMatchArray | null;
    return name !== null && annotations.has(name[0]) ? 'annotation' : 'error';
  }
  if (stream.match(DURATION)) {
    return 'duration';
  }
  if (stream.match(NUMBER)) {
    // `5x` or `10mins`: a number glued to an unknown unit.
    return stream.eatWhile(/[A-Za-z_0-9]/) ? 'error' : 'number';
  }
  const word = stream.match(WORD) as RegExpMatchArray | null;
  if (word !== null) {
    if (state.afterDot) {
      return 'property';
    }
    if (keywords.has(word[0])) {
      return 'keyword';
    }
    if (operatorWords.has(word[0])) {
      return 'operatorKeyword';
    }
    return constants.has(word[0]) ? 'atom' : 'name';
  }
  if (stream.match(OPERATOR)) {
    return 'operator';
  }
  stream.next();
  if ('()[]{}'.includes(ch)) {
    return 'bracket';
  }
  return ch === ',' || ch === '.' ? 'punctuation' : 'error';
}

/** The stream language: the `%%cep` line first, then the language body. */
export const cepLanguage = StreamLanguage.define<ICepState>({
  name: 'cep',
  startState: () => ({ started: false, inMagicLine: false, afterDot: false }),
  copyState: state => ({ ...state }),
  token(stream, state) {
    if (stream.sol()) {
      state.inMagicLine = false;
    }
    if (stream.eatSpace()) {
      return null;
    }
    if (!state.started) {
      state.started = true;
      if (stream.match(MAGIC)) {
        state.inMagicLine = true;
        return 'magic';
      }
    }
    if (state.inMagicLine) {
      return magicLineToken(stream);
    }
    const token = bodyToken(stream, state);
    state.afterDot = token === 'punctuation' && stream.current() === '.';
    return token;
  },
  languageData: { commentTokens: { line: LINE_COMMENT } },
  tokenTable: TOKEN_TABLE
});

/** The language plus its token classes and a `cep-Editor` class on the editor while it is active. */
export function cepSupport(): LanguageSupport {
  return new LanguageSupport(cepLanguage, [
    syntaxHighlighting(cepHighlighter),
    EditorView.editorAttributes.of({ class: 'cep-Editor' })
  ]);
}
