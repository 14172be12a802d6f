# ruff: noqa: E501  (golden messages are kept on one line each, exactly as users see them)
"""Golden tests of error messages: text, line, column and caret, in cell coordinates (first line 2).

Each case is one kind of mistake; the expected text is exactly what a %%cep user sees.
"""

from __future__ import annotations

import pytest

from workbench.errors import CepError, CepSyntaxError
from workbench.language import compile_text

# (name, text, error class, rendered message, line, column)
CASES: list[tuple[str, str, str, str, int, int]] = [
    (
        "typo_within",
        "sequence s wthin 10s begin a",
        "CepSyntaxError",
        "line 2, column 12: unexpected 'wthin'; expected one of 'aggregate', 'begin', 'emit', 'flink', 'max', 'measures', 'no', 'partition', 'skip', 'subset', 'within' (did you mean 'within'?)\n    sequence s wthin 10s begin a\n               ^",
        2,
        12,
    ),
    (
        "typo_where",
        "sequence s\n  begin a wher e.x > 1",
        "CepSyntaxError",
        "line 3, column 11: unexpected 'wher'; expected one of 'allow', 'consecutive', 'event', 'followed', 'gaps', 'greedy', 'group', 'next', 'not', 'one', 'optional', 'receive', 'sequence', 'times', 'until', 'where', 'within', ')', ... (did you mean 'where'?)\n      begin a wher e.x > 1\n              ^",
        3,
        11,
    ),
    (
        "typo_followed",
        "sequence s\n  begin a\n  folowed by b",
        "CepSyntaxError",
        "line 4, column 3: unexpected 'folowed'; expected one of 'allow', 'consecutive', 'event', 'followed', 'gaps', 'greedy', 'group', 'next', 'not', 'one', 'optional', 'receive', 'sequence', 'times', 'until', 'where', 'within', ')', ... (did you mean 'followed'?)\n      folowed by b\n      ^",
        4,
        3,
    ),
    (
        "missing_begin",
        "sequence s next a",
        "CepSyntaxError",
        "line 2, column 12: unexpected 'next'; expected one of 'aggregate', 'begin', 'emit', 'flink', 'max', 'measures', 'no', 'partition', 'skip', 'subset', 'within'\n    sequence s next a\n               ^",
        2,
        12,
    ),
    (
        "duration_without_unit",
        "sequence s within 10 begin a",
        "CepSyntaxError",
        "line 2, column 19: unexpected '10'; expected a duration (250ms, 10s, 5min, 1h, 3d) (a duration needs a unit: write e.g. '10s' or '10ms'; units: ms, s, sec, min, h, d)\n    sequence s within 10 begin a\n                      ^",
        2,
        19,
    ),
    (
        "bad_unit",
        "sequence s within 10 weeks begin a",
        "CepSyntaxError",
        "line 2, column 19: unexpected '10'; expected a duration (250ms, 10s, 5min, 1h, 3d) (units: ms, s, sec, min, h, d)\n    sequence s within 10 weeks begin a\n                      ^",
        2,
        19,
    ),
    (
        "incomplete_condition",
        "sequence s begin a where e.x >",
        "CepSyntaxError",
        "line 2, column 31: unexpected end of text; expected one of '(', '-', '[', '{', a duration (250ms, 10s, 5min, 1h, 3d), a name, a number, a string\n    sequence s begin a where e.x >\n                                  ^",
        2,
        31,
    ),
    (
        "end_of_a_cell",  # a cell's last line ends with a newline; blank and comment lines follow
        "sequence s\n    begin a where e.x > 1 and\n\n    # to do\n",
        "CepSyntaxError",
        "line 3, column 30: unexpected end of text; expected one of 'not', '(', '-', '[', '{', a duration (250ms, 10s, 5min, 1h, 3d), a name, a number, a string\n        begin a where e.x > 1 and\n                                 ^",
        3,
        30,
    ),
    (
        "bad_character",
        "sequence s begin a where e.x $ 2",
        "CepSyntaxError",
        "line 2, column 30: unexpected '$'; expected one of '(', ')', '**', '+' or '-', ',', '.', ':', '<', '>', '@and' or '@or', '[', ']', 'including current', 'is not', 'not in', 'or where', 'over last', 'over session', ...\n    sequence s begin a where e.x $ 2\n                                 ^",
        2,
        30,
    ),
    (
        "times_not_number",
        "sequence s begin a times x",
        "CepSyntaxError",
        "line 2, column 26: unexpected 'x'; expected a whole number\n    sequence s begin a times x\n                             ^",
        2,
        26,
    ),
    (
        "unclosed_group_block",
        "group g instance 1 @and { a: x",
        "CepSyntaxError",
        "line 2, column 31: unexpected end of text; expected one of 'where', '@and' or '@or', '}', a `quoted name`, a name\n    group g instance 1 @and { a: x\n                                  ^",
        2,
        31,
    ),
    (
        "unclosed_paren",
        "sequence s begin a where (e.x > 1",
        "CepSyntaxError",
        "line 2, column 34: unexpected end of text; expected one of 'for', ')', ','\n    sequence s begin a where (e.x > 1\n                                     ^",
        2,
        34,
    ),
    (
        "unknown_stage_in_matched",
        "sequence s\n  begin a\n  next b where e.x > matched('c')[0].x",
        "CepCompileError",
        "line 4, column 30: unknown stage 'c'\n      next b where e.x > matched('c')[0].x\n                                 ^",
        4,
        30,
    ),
    (
        "unknown_stage_name_typo",
        "sequence s\n  begin down\n  next up where e.x > last(donw).x",
        "CepCompileError",
        "line 4, column 28: unknown variable or stage 'donw' (did you mean 'down'?)\n      next up where e.x > last(donw).x\n                               ^",
        4,
        28,
    ),
    (
        "unknown_skip_target",
        "sequence s skip to first z begin a next b",
        "CepCompileError",
        "line 2, column 26: unknown stage 'z' in the skip strategy\n    sequence s skip to first z begin a next b\n                             ^",
        2,
        26,
    ),
    (
        "duplicate_stage",
        "sequence s begin a next a",
        "CepCompileError",
        "line 2, column 25: stage 'a' is defined twice (first on line 2)\n    sequence s begin a next a\n                            ^",
        2,
        25,
    ),
    (
        "quantifier_on_negated",
        "sequence s begin a not next b one or more",
        "CepCompileError",
        "line 2, column 31: a negated stage ('not next' / 'not followed by') takes no quantifier\n    sequence s begin a not next b one or more\n                                  ^",
        2,
        31,
    ),
    (
        "two_counts",
        "sequence s begin a times 2 one or more",
        "CepCompileError",
        "line 2, column 28: a stage takes one count ('times 3', 'times 2..4', 'one or more', 'times 2 or more')\n    sequence s begin a times 2 one or more\n                               ^",
        2,
        28,
    ),
    (
        "consecutive_and_combinations",
        "sequence s begin a one or more consecutive allow combinations",
        "CepCompileError",
        "line 2, column 44: 'consecutive' and 'allow combinations' exclude each other\n    sequence s begin a one or more consecutive allow combinations\n                                               ^",
        2,
        44,
    ),
    (
        "greedy_without_count",
        "sequence s begin a greedy next b",
        "CepCompileError",
        "line 2, column 20: 'greedy' needs a count first (e.g. 'one or more greedy')\n    sequence s begin a greedy next b\n                       ^",
        2,
        20,
    ),
    (
        "bad_range",
        "sequence s begin a times 4..2",
        "CepCompileError",
        "line 2, column 20: invalid count: need 0 <= n <= m and m >= 1, got 4..2\n    sequence s begin a times 4..2\n                       ^",
        2,
        20,
    ),
    (
        "within_previous_on_first",
        "sequence s begin a within 1s of previous",
        "CepCompileError",
        "line 2, column 27: the first stage has no previous event: 'within ... of previous' applies from the second stage on\n    sequence s begin a within 1s of previous\n                              ^",
        2,
        27,
    ),
    (
        "disallowed_construct",
        "sequence s begin a where e.__class__ == 1",
        "CepCompileError",
        "line 2, column 26: attribute '__class__' is not allowed in a condition\n    sequence s begin a where e.__class__ == 1\n                             ^",
        2,
        26,
    ),
    (
        "disallowed_method",
        "sequence s begin a where e.name.format(1)",
        "CepCompileError",
        "line 2, column 26: method 'format' is not allowed; allowed: casefold, count, endswith, find, get, isalpha, isdigit, isnumeric, lower, lstrip, replace, rstrip, split, startswith, strip, title, upper\n    sequence s begin a where e.name.format(1)\n                             ^",
        2,
        26,
    ),
    (
        "unknown_aggregate",
        "sequence s aggregate m = median(a.x) begin a",
        "CepCompileError",
        "line 2, column 26: unknown aggregate 'median' (did you mean 'mean'?)\n    sequence s aggregate m = median(a.x) begin a\n                             ^",
        2,
        26,
    ),
    (
        "unknown_variable_in_group",
        "group g\n  on login(user as User)\n  @and { a: login(user = Usr) }",
        "CepCompileError",
        "line 4, column 26: unknown variable 'Usr' (did you mean 'User'?); to bind a new variable write 'user as Usr'\n      @and { a: login(user = Usr) }\n                             ^",
        4,
        26,
    ),
    (
        "two_initiators",
        "group g\n  on login(user as U)\n  on logout(user as U)\n  @or { a: trade(user = U) }",
        "CepCompileError",
        "line 4, column 3: a group has one initiator: 'on ...' is given twice (first on line 3); use one 'on' with a where clause, or two groups\n      on logout(user as U)\n      ^",
        4,
        3,
    ),
    (
        "variable_bound_twice_in_a_head",
        "group g\n  on login(user as U, name as U)\n  @or { a: trade(user = U) }",
        "CepCompileError",
        "line 3, column 31: variable 'U' is bound twice here (by 'user' and 'name'); bind another name and compare them in the where clause (where e.user == e.name)\n      on login(user as U, name as U)\n                                  ^",
        3,
        31,
    ),
    (
        "initiator_variable_bound_again",
        "group g\n  on login(user as U)\n  @or { a: trade(user as U) }",
        "CepCompileError",
        "line 4, column 26: variable 'U' is already bound by the initiator ('on ...'); write 'user = U' to compare with it, or 'user as' a new name\n      @or { a: trade(user as U) }\n                             ^",
        4,
        26,
    ),
    (
        "constant_bound_again",
        "group g\n  const U = 'ann'\n  on login\n  @or { a: trade(user as U) }",
        "CepCompileError",
        "line 5, column 26: variable 'U' is already bound by a constant; write 'user = U' to compare with it, or 'user as' a new name\n      @or { a: trade(user as U) }\n                             ^",
        5,
        26,
    ),
    (
        "zero_timeout",
        "group g\n  on login\n  @or @timeout(0s) { a: trade }",
        "CepCompileError",
        "line 4, column 16: @timeout must be a finite duration greater than zero, got 0 ms\n      @or @timeout(0s) { a: trade }\n                   ^",
        4,
        16,
    ),
    (
        "infinite_timeout",
        "group g\n  on login\n  @or @timeout(1e309) { a: trade }",
        "CepCompileError",
        "line 4, column 16: @timeout must be a finite duration greater than zero, got inf ms\n      @or @timeout(1e309) { a: trade }\n                   ^",
        4,
        16,
    ),
    (
        "non_ascii_name",
        "group gé\n  on login\n  @or { a: trade }",
        "CepSyntaxError",
        "line 2, column 8: unexpected 'é'; expected one of '(', ')', ',', ':', '=', '@and' or '@or', 'or where', '|', '}', a `quoted name`, a name (a name is ASCII letters, digits and '_'; put any other name in backquotes: `gé`)\n    group gé\n           ^",
        2,
        8,
    ),
    (
        "unknown_variable_in_where",
        "group g\n  on login(user as User)\n  @and { a: login where e.user == Usr }",
        "CepCompileError",
        "line 4, column 35: unknown variable 'Usr' (did you mean 'User'?)\n      @and { a: login where e.user == Usr }\n                                      ^",
        4,
        35,
    ),
    (
        "unknown_annotation",
        "group g instance 1 @and { @nto a: x }",
        "CepCompileError",
        "line 2, column 28: unknown annotation '@nto' on a channel (did you mean '@not'?)\n    group g instance 1 @and { @nto a: x }\n                               ^",
        2,
        28,
    ),
    (
        "annotation_wrong_place",
        "group g instance 1 @and @paused { a: x }",
        "CepCompileError",
        "line 2, column 26: '@paused' does not apply to the @and exit; allowed: @timeout, @timeout_channel, @count, @size, @where, @counts\n    group g instance 1 @and @paused { a: x }\n                             ^",
        2,
        26,
    ),
    (
        "annotation_arity",
        "group g instance 1 @or { @size a: x }",
        "CepCompileError",
        "line 2, column 26: '@size' takes 1 to 3 arguments, got 0\n    group g instance 1 @or { @size a: x }\n                             ^",
        2,
        26,
    ),
    (
        "annotation_twice",
        "group g instance 1 @and { @not @not a: x }",
        "CepCompileError",
        "line 2, column 32: '@not' is given twice\n    group g instance 1 @and { @not @not a: x }\n                                   ^",
        2,
        32,
    ),
    (
        "unknown_channel_in_stop",
        "group g instance 1 @and { @stop(c_logn) a: x\n  c_login: login }",
        "CepCompileError",
        "line 2, column 33: unknown channel 'c_logn' (did you mean 'c_login'?)\n    group g instance 1 @and { @stop(c_logn) a: x\n                                    ^",
        2,
        33,
    ),
    (
        "duplicate_channel",
        "group g instance 1 @and { a: x\n  a: y }",
        "CepCompileError",
        "line 3, column 3: channel 'a' is defined twice (first on line 2); name channels with 'NAME: type(...)' or @id(NAME)\n      a: y }\n      ^",
        3,
        3,
    ),
    (
        "unknown_field_schema",
        "event login(user, ip)\ngroup g instance 1 @and { a: login where e.adress == 1 }",
        "CepCompileError",
        "line 3, column 44: unknown field 'adress'; fields: ip, user\n    group g instance 1 @and { a: login where e.adress == 1 }\n                                               ^",
        3,
        44,
    ),
    (
        "unknown_match_field_schema",
        "event login(user, ip)\ngroup g instance 1 @and { a: login(usr = 'x') }",
        "CepCompileError",
        "line 3, column 36: event 'login' has no field 'usr' (did you mean 'user'?); fields: user, ip\n    group g instance 1 @and { a: login(usr = 'x') }\n                                       ^",
        3,
        36,
    ),
    (
        "bad_count_mode",
        "group g instance 1 @and { @count(1, 2, strickt) a: x }",
        "CepCompileError",
        "line 2, column 40: @count mode must be ignore, record or strict (did you mean 'strict'?)\n    group g instance 1 @and { @count(1, 2, strickt) a: x }\n                                           ^",
        2,
        40,
    ),
    (
        "count_not_number",
        "group g instance 1 @and { @count(two) a: x }",
        "CepCompileError",
        "line 2, column 34: @count's first argument must be a constant (a number, a string, True/False/None), got 'two'\n    group g instance 1 @and { @count(two) a: x }\n                                     ^",
        2,
        34,
    ),
    (
        "bad_timeout",
        "group g instance 1 @and @timeout('soon') { a: x }",
        "CepCompileError",
        "line 2, column 34: @timeout must be a duration such as 250ms, 10s, 5min (a bare number means milliseconds)\n    group g instance 1 @and @timeout('soon') { a: x }\n                                     ^",
        2,
        34,
    ),
    (
        "bad_accumulator",
        "group g instance 1 @or { @size(2, 2, Counter(e.k)) a: x }",
        "CepCompileError",
        "line 2, column 38: an accumulator is MapCounter(KEY_EXPR) or SortedAccumulator(KEY_EXPR, VALUE_EXPR[, top=N]) (did you mean 'MapCounter'?)\n    group g instance 1 @or { @size(2, 2, Counter(e.k)) a: x }\n                                         ^",
        2,
        38,
    ),
    (
        "no_initiator",
        "group g @and { a: x }",
        "CepCompileError",
        "line 2, column 1: pattern 'g': a reaction group needs an initiator or start-up instances\n    group g @and { a: x }\n    ^",
        2,
        1,
    ),
    (
        "count_in_or_group",
        "group g\n  instance 1\n  @or {\n    @count(2) a: x\n  }",
        "CepCompileError",
        "line 5, column 15: pattern 'g' 'a': @count on a channel is defined for AND groups (use @size in OR groups)\n        @count(2) a: x\n                  ^",
        5,
        15,
    ),
    (
        "duplicate_pattern",
        "sequence s begin a\nsequence s begin b",
        "CepCompileError",
        "line 3, column 10: pattern 's' is defined twice (first on line 2)\n    sequence s begin b\n             ^",
        3,
        10,
    ),
    (
        "unnamed",
        "sequence begin a",
        "CepCompileError",
        "line 2, column 1: this definition needs a name (write e.g. 'sequence my_pattern ...')\n    sequence begin a\n    ^",
        2,
        1,
    ),
    (
        "stage_called_e",
        "sequence s begin e",
        "CepCompileError",
        "line 2, column 18: a stage cannot be called 'e' (conditions use that name)\n    sequence s begin e\n                     ^",
        2,
        18,
    ),
    (
        "match_value_not_constant",
        "group g instance 1 @and { a: x(n = 1 + 2) }",
        "CepCompileError",
        "line 2, column 36: the value of 'n' must be a constant (a number, a string, True/False/None), got '1 + 2'\n    group g instance 1 @and { a: x(n = 1 + 2) }\n                                       ^",
        2,
        36,
    ),
    (
        "state_without_initiator",
        "group g instance 1 state B = [] @and { @collect(B, e.x) a: x }",
        "CepCompileError",
        "line 2, column 33: 'state' variables need an initiator ('on ...')\n    group g instance 1 state B = [] @and { @collect(B, e.x) a: x }\n                                    ^",
        2,
        33,
    ),
    (
        "collect_undeclared",
        "group g on x @and { @collect(Bsk, e.x) a: y }",
        "CepCompileError",
        "line 2, column 30: @collect needs a 'state Bsk = []' declaration\n    group g on x @and { @collect(Bsk, e.x) a: y }\n                                 ^",
        2,
        30,
    ),
    (
        "vars_not_bound",
        "group g instance 1 @and { @vars(U) a: login(user as V) }",
        "CepCompileError",
        "line 2, column 33: @vars names 'U', which this channel does not bind\n    group g instance 1 @and { @vars(U) a: login(user as V) }\n                                    ^",
        2,
        33,
    ),
    (
        "end_of_text",
        "sequence s\n  begin a\n  next",
        "CepSyntaxError",
        "line 4, column 7: unexpected end of text; expected one of 'permute', '(', a `quoted name`, a name\n      next\n          ^",
        4,
        7,
    ),
    (
        "type_clash_compare",
        "event order(id: int, amount: float, currency: str)\nsequence s begin o: order where o.amount > '100'",
        "CepCompileError",
        "line 3, column 33: type clash: field 'amount' is declared float, compared with str '100'\n    sequence s begin o: order where o.amount > '100'\n                                    ^",
        3,
        33,
    ),
    (
        "type_clash_match",
        "event order(id: int, amount: float, currency: str)\ngroup g instance 1 @or { o: order(currency = 3) }",
        "CepCompileError",
        "line 3, column 46: type clash: field 'currency' of 'order' is declared str, got 3\n    group g instance 1 @or { o: order(currency = 3) }\n                                                 ^",
        3,
        46,
    ),
    (
        "type_clash_in",
        "event order(id: int, amount: float, currency: str)\nsequence s begin o: order where 'EUR' in e.amount",
        "CepCompileError",
        "line 3, column 42: type clash: 'EUR' in e.amount, but 'amount' is declared float\n    sequence s begin o: order where 'EUR' in e.amount\n                                             ^",
        3,
        42,
    ),
    (
        "plural_duration_unit",
        "sequence s\n  begin a\n  followed by b within 5 mins",
        "CepSyntaxError",
        "line 4, column 24: unexpected '5'; expected a duration (250ms, 10s, 5min, 1h, 3d) (did you mean '5min'? units: ms, s, sec, min, h, d)\n      followed by b within 5 mins\n                           ^",
        4,
        24,
    ),
    (
        "spelled_duration_unit",
        "sequence s within 2 hours begin a",
        "CepSyntaxError",
        "line 2, column 19: unexpected '2'; expected a duration (250ms, 10s, 5min, 1h, 3d) (did you mean '2h'? units: ms, s, sec, min, h, d)\n    sequence s within 2 hours begin a\n                      ^",
        2,
        19,
    ),
    (
        "negated_group_of_stages",
        "sequence s\n  begin a\n  not followed by (begin b next c)",
        "CepCompileError",
        "line 4, column 3: a group of stages cannot be negated ('not next (...)' / 'not followed by (...)'); negate a single stage instead\n      not followed by (begin b next c)\n      ^",
        4,
        3,
    ),
    (
        "greedy_group_of_stages",
        "sequence s\n  begin a\n  followed by (begin b next c) one or more greedy",
        "CepCompileError",
        "line 4, column 44: a group of stages cannot be 'greedy' (only a single looping stage can)\n      followed by (begin b next c) one or more greedy\n                                               ^",
        4,
        44,
    ),
    (
        "unknown_function",
        "sequence s begin a where frobnicate(e.hi) > 2",
        "CepCompileError",
        "line 2, column 26: unknown function 'frobnicate'; a condition calls built-in functions and those registered from Python with workbench.engine.expr.register_function('frobnicate', fn)\n    sequence s begin a where frobnicate(e.hi) > 2\n                             ^",
        2,
        26,
    ),
    (
        "annotation_after_channel",
        "group g\n  on login(user as U)\n  @and {\n    a: logout(user = U) @stop(c)\n  }",
        "CepSyntaxError",
        "line 5, column 25: '@stop(c)' annotates nothing: annotations go before the channel or block they apply to (write '@stop(c) a: type(...)')\n        a: logout(user = U) @stop(c)\n                            ^",
        5,
        25,
    ),
    (
        "group_annotation_after_block",
        "group g instance 1 @and { a: x }\n  @timeout(5s)",
        "CepSyntaxError",
        "line 3, column 3: unexpected '@'; expected one of 'event', 'group', 'receive', 'sequence', the end of the text (a group's own annotations go right after its operator: '@and @timeout(5s) { ... }')\n      @timeout(5s)\n      ^",
        3,
        3,
    ),
    (
        "undeclared_type_near_a_declared_one",
        "event login(user, ip)\nsequence s begin a: lgin where e.user == 1",
        "CepCompileError",
        "line 3, column 21: unknown event type 'lgin' (did you mean 'login'?); declared: login; declare it with 'event lgin(...)' if it is meant\n    sequence s begin a: lgin where e.user == 1\n                        ^",
        3,
        21,
    ),
    (
        "undeclared_type_far_from_declared_ones",
        "event login(user, ip)\ngroup g\n  on login(user as U)\n  @and { a: payment(user = U) }",
        "CepCompileError",
        "line 5, column 13: unknown event type 'payment'; declared: login; declare it with 'event payment(...)' if it is meant\n      @and { a: payment(user = U) }\n                ^",
        5,
        13,
    ),
    (
        "group_channel_missing_colon",
        "event login(user)\nevent failed(user)\ngroup g\n  on login(user as U)\n  @and {\n    @count(3) tries failed(user = U)\n  }",
        "CepCompileError",
        "line 7, column 15: expected ':' after the channel name 'tries' (write 'tries: failed(...)'); 'tries' is not a declared event type\n        @count(3) tries failed(user = U)\n                  ^",
        7,
        15,
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "cls", "message", "line", "column"), CASES, ids=[c[0] for c in CASES]
)
def test_error_message(name: str, text: str, cls: str, message: str, line: int, column: int) -> None:
    with pytest.raises(CepError) as info:
        compile_text(text, first_line=2)
    err = info.value
    assert cls == type(err).__name__
    assert message == str(err)
    span = err.span  # type: ignore[attr-defined]
    assert (line, column) == (span.line, span.column)
    assert not isinstance(err, SyntaxError)
    # the caret sits under the reported column of the reported line
    rendered = str(err).splitlines()
    assert rendered[-1].index("^") - 4 == column - 1
    assert rendered[-2][4:] == ("\n" + text).splitlines()[line - 1]


def test_at_least_thirty_kinds() -> None:
    assert len({c[0] for c in CASES}) >= 30


@pytest.mark.parametrize(
    ("text", "name", "typ"),
    [
        ("sequence s\n    begin a login\n    next b: trade", "a", "login"),
        ("sequence s begin a where e.x > 1 next b trade where e.p > 1", "b", "trade"),
        ("sequence s begin a: login followed by any c trade", "c", "trade"),
    ],
)
def test_a_missing_colon_after_a_stage_name_is_named(text: str, name: str, typ: str) -> None:
    with pytest.raises(CepSyntaxError) as info:
        compile_text(text)
    assert f"expected ':' after the stage name '{name}' (write '{name}: {typ}')" in str(info.value)


def test_a_misspelt_keyword_after_a_stage_name_still_gets_its_suggestion() -> None:
    with pytest.raises(CepSyntaxError) as info:
        compile_text("sequence s begin a wher e.x > 1")
    assert "did you mean 'where'" in str(info.value)


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("sequence s begin a: login followedBy b: trade", "(write 'followed by' for 'followedBy')"),
        ("sequence s begin a: login notFollowedBy b: trade", "(write 'not followed by' for 'notFollowedBy')"),
        ("sequence s begin a: login next b: trade oneOrMore", "(write 'one or more' for 'oneOrMore')"),
        (
            "sequence s skipPastLastEvent begin a: login",
            "(write 'skip past last event' for 'skipPastLastEvent')",
        ),
        ("sequence s begin a: login where e.x > 1 && e.y > 1", "(write 'and' for '&&')"),
        ("sequence s begin a: login where e.x > 1 || e.y > 1", "(write 'or' for '||')"),
        ("sequence s begin a: login where !(e.x > 1)", "(write 'not' for '!')"),
        ("sequence s begin a: login where e.amount = 10", "(write '==' for '=')"),
        ("sequence s begin a: login where e.amount <> 10", "(write '!=' for '<>')"),
        ("sequence s begin a: login where ~(e.x > 1)", "(write 'not' for '~')"),
        ("sequence s begin a: login where e.x | e.y", "(write 'or' for '|' in a condition"),
    ],
)
def test_another_language_s_spelling_is_named_with_this_one_s(text: str, hint: str) -> None:
    with pytest.raises(CepSyntaxError) as info:
        compile_text(text)
    assert hint in str(info.value)
    assert "did you mean" not in str(info.value)


def test_a_bare_field_name_is_pointed_to_the_event() -> None:
    with pytest.raises(CepError) as info:
        compile_text("sequence s begin a: login next b: trade where price > 100")
    assert "unknown variable or stage 'price' (did you mean 'e.price'?" in str(info.value)
    with pytest.raises(CepError) as declared:  # a field the declaration does not name: no such hint
        compile_text("event trade(qty: int)\nsequence s begin b: trade where price > 100")
    assert "e.price" not in str(declared.value)


def test_text_nested_deeper_than_the_limit_is_refused_at_the_bracket_not_by_the_stack() -> None:
    deep = "sequence s begin x0 " + "".join(f"followed by ( begin x{i} " for i in range(1, 400)) + ")" * 399
    with pytest.raises(CepError, match="brackets nest more than 100 deep") as err:
        compile_text(deep)
    assert not isinstance(err.value, RecursionError)
    assert str(err.value).startswith("line 1, column ")
    fine = "sequence s begin x0 " + "".join(f"followed by ( begin x{i} " for i in range(1, 101)) + ")" * 100
    compile_text(fine)
    # brackets in strings, quoted names and comments do not count
    compile_text("# " + "(" * 100 + "\nsequence s begin a where e.x == '" + "(" * 100 + "'")
