"""Reading annotation arguments and clause values of ``%%cep`` text (numbers, durations, names)."""

from __future__ import annotations

import ast as pyast
import contextlib
import io
import math
import tokenize
from collections.abc import Mapping, Sequence

from workbench.engine.reactions.patterns import MIN_TIMER_PERIOD_MS
from workbench.errors import CepError
from workbench.language import ast
from workbench.language.conditions import nearest
from workbench.language.context import Context
from workbench.language.grammar import parse_duration

__all__ = [
    "CHANNEL_ANNOTATIONS",
    "EXIT_ANNOTATIONS",
    "INITIATOR_ANNOTATIONS",
    "MAX_COUNT",
    "RECEIVE_ANNOTATIONS",
    "call_arguments",
    "check_annotations",
    "count_arg",
    "hop_args",
    "ident_arg",
    "int_arg",
    "is_none",
    "literal",
    "ms_arg",
    "never_open",
    "opt_int",
    "opt_ms",
    "timeout_arg",
    "timer_args",
    "window_ms",
]

#: annotation -> (min args, max args) for channels, group blocks (the exit) and initiators.
CHANNEL_ANNOTATIONS: dict[str, tuple[int, int]] = {
    "not": (0, 0),
    "stop": (0, 99),
    "id": (1, 1),
    "pause": (1, 99),
    "resume": (1, 99),
    "paused": (0, 0),
    "optional": (0, 0),
    "count": (1, 3),
    "size": (1, 3),
    "timer": (1, 3),
    "hop": (2, 3),
    "timeout": (1, 1),
    "vars": (0, 99),
    "after": (1, 99),
    "collect": (2, 2),
    "counts": (0, 1),
}
EXIT_ANNOTATIONS: dict[str, tuple[int, int]] = {
    "timeout": (1, 1),
    "timeout_channel": (0, 0),
    "count": (1, 1),
    "size": (1, 1),
    "where": (1, 1),
    "counts": (0, 1),
}
INITIATOR_ANNOTATIONS: dict[str, tuple[int, int]] = {"template": (0, 0), "id": (1, 1)}
RECEIVE_ANNOTATIONS: dict[str, tuple[int, int]] = {"count": (1, 1)}

#: the largest count a quantifier may name (``times N``): each occurrence becomes an NFA state.
MAX_COUNT = 1_000

#: the most stages a sequence may have (each is at least one NFA state; compiling grows faster
#: than linearly with them)
MAX_STAGES = 1_000


# ---- helpers ---------------------------------------------------------------------------------------


def literal(ctx: Context, expr: ast.Expr, what: str) -> object:
    try:
        return pyast.literal_eval(expr.text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        msg = f"{what} must be a constant (a number, a string, True/False/None), got {expr.text!r}"
        raise ctx.fail(msg, expr.span) from None


def int_arg(ctx: Context, arg: ast.Expr | ast.Duration, what: str) -> int:
    if isinstance(arg, ast.Expr):
        value = literal(ctx, arg, what)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    msg = f"{what} must be a whole number"
    raise ctx.fail(msg, arg.span)


def count_arg(
    ctx: Context, arg: ast.Expr | ast.Duration, what: str, *, least: int, unlimited: bool = False
) -> int:
    """A whole number ``>= least`` (or ``-1``, Prova's "any number", when ``unlimited``)."""
    value = int_arg(ctx, arg, what)
    if value >= least or (unlimited and value == -1):
        return value
    allowed = f"a whole number >= {least}" + (" or -1 (any number)" if unlimited else "")
    msg = f"{what} must be {allowed}, got {value}"
    raise ctx.fail(msg, arg.span)


def window_ms(ctx: Context, window: ast.Duration | None) -> int | float | None:
    """The milliseconds of a ``within`` window (``None``: none).

    A window of 0 is refused: the API and Flink read ``within(0)`` as *no* window, which the text
    says by leaving ``within`` out, and a negative one is nonsense."""
    if window is None:
        return None
    if window.ms <= 0:
        msg = (
            f"a 'within' window must be longer than 0 ms, got {window.ms} ms "
            "(for no window, leave 'within' out)"
        )
        raise ctx.fail(msg, window.span)
    return window.ms


def never_open(after: Mapping[str, Sequence[str]]) -> list[str]:
    """The channels whose ``@after`` links can never be satisfied, in the order of ``after``.

    ``after`` maps a channel to the channels whose firing opens it (any one of them). A channel
    without ``@after`` is open from the start; a channel opens when any channel it names can open.
    A cycle is fine when one of its channels is opened from outside it (a Prova restart loop);
    channels that only wait for each other never open.
    """
    can = {t for targets in after.values() for t in targets if t not in after}
    grew = True
    while grew:  # why a fixpoint: each pass opens the channels one link further from an open one
        grew = False
        for channel, targets in after.items():
            if channel not in can and any(t in can for t in targets):
                can.add(channel)
                grew = True
    return [c for c in after if c not in can]


def ms_arg(ctx: Context, arg: ast.Expr | ast.Duration, what: str) -> int | float:
    if isinstance(arg, ast.Duration):
        return arg.ms
    value = literal(ctx, arg, what)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):  # Prova's duration strings: @timeout('2 s'), @timeout('500 ms')
        with contextlib.suppress(CepError, ValueError):
            return parse_duration(value.strip())
    msg = f"{what} must be a duration such as 250ms, 10s, 5min (a bare number means milliseconds)"
    raise ctx.fail(msg, arg.span)


def timeout_arg(ctx: Context, arg: ast.Expr | ast.Duration, what: str) -> int | float:
    """A ``@timeout``: a duration greater than zero and finite (``0`` and ``1e309`` are refused here,
    where the caret can point at them)."""
    value = ms_arg(ctx, arg, what)
    if 0 < value < math.inf:
        return value
    msg = f"{what} must be a finite duration greater than zero, got {value!r} ms"
    raise ctx.fail(msg, arg.span)


def call_arguments(text: str) -> list[tuple[str, int]]:
    """The top-level arguments of the call ``text`` (one line): each one's exact text and offset."""
    out: list[tuple[str, int]] = []
    depth = 0
    start = -1
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.OP:
            continue
        col = tok.start[1]
        if tok.string in "([{":
            depth += 1
            if depth == 1:
                start = col + 1
        elif tok.string in ")]}":
            depth -= 1
            if depth == 0:
                piece = text[start:col]
                if piece.strip():
                    out.append((piece.strip(), start + len(piece) - len(piece.lstrip())))
                break
        elif tok.string == "," and depth == 1:
            piece = text[start:col]
            out.append((piece.strip(), start + len(piece) - len(piece.lstrip())))
            start = col + 1
    return out


def is_none(arg: ast.Expr | ast.Duration) -> bool:
    return isinstance(arg, ast.Expr) and arg.text.strip() == "None"


def opt_int(ctx: Context, arg: ast.Expr | ast.Duration, what: str) -> int | None:
    return None if is_none(arg) else int_arg(ctx, arg, what)


def opt_ms(ctx: Context, arg: ast.Expr | ast.Duration, what: str) -> int | float | None:
    return None if is_none(arg) else ms_arg(ctx, arg, what)


def timer_args(ctx: Context, args: Sequence[ast.Expr | ast.Duration]) -> tuple[float, float | None]:
    """``@timer(delay[, period, ...])``'s delay and period; a period (or a lone delay) under 1 ms fails."""
    delay = ms_arg(ctx, args[0], "@timer's delay")
    period = opt_ms(ctx, args[1], "@timer's period") if len(args) > 1 else None
    effective, arg = (delay, args[0]) if period is None else (period, args[1])
    if effective < MIN_TIMER_PERIOD_MS or effective == float("inf"):
        msg = (
            f"@timer's period must be a finite duration of at least {MIN_TIMER_PERIOD_MS} ms, got "
            f"{effective!r} ms (a window every fraction of a millisecond would flood the output)"
        )
        raise ctx.fail(msg, arg.span)
    if delay == float("inf"):
        msg = "@timer's delay must be a finite duration"
        raise ctx.fail(msg, args[0].span)
    return delay, period


def hop_args(ctx: Context, args: Sequence[ast.Expr | ast.Duration]) -> tuple[int, int]:
    """``@hop(size, hop, ...)``'s size and hop: whole milliseconds, at least 1 ms, hop <= size."""
    size, hop = (ms_arg(ctx, a, f"@hop's {w}") for a, w in zip(args[:2], ("size", "hop"), strict=True))
    for value, arg, what in ((size, args[0], "size"), (hop, args[1], "hop")):
        if not (MIN_TIMER_PERIOD_MS <= value < float("inf")) or value != int(value):
            msg = (
                f"@hop's {what} must be a whole number of milliseconds of at least {MIN_TIMER_PERIOD_MS}, "
                f"got {value!r} ms"
            )
            raise ctx.fail(msg, arg.span)
    if hop > size:
        msg = (
            f"@hop's hop ({hop!r} ms) must not exceed its size ({size!r} ms): the events between two "
            "windows would belong to none (use @hop(S, S) for tumbling windows)"
        )
        raise ctx.fail(msg, args[1].span)
    return int(size), int(hop)


def ident_arg(ctx: Context, arg: ast.Expr | ast.Duration, what: str) -> str:
    if isinstance(arg, ast.Expr):
        text = arg.text.strip()
        if text.isidentifier():
            return text
        if text[:1] == "`" and text[-1:] == "`":
            return text[1:-1]
        try:
            value = pyast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = None
        if isinstance(value, str):
            return value
    msg = f"{what} must be a name"
    raise ctx.fail(msg, arg.span)


def check_annotations(
    ctx: Context, annotations: Sequence[ast.Annotation], allowed: Mapping[str, tuple[int, int]], where: str
) -> dict[str, ast.Annotation]:
    seen: dict[str, ast.Annotation] = {}
    for a in annotations:
        name = a.name.text
        if name not in allowed:
            others = [
                k for k in (*CHANNEL_ANNOTATIONS, *EXIT_ANNOTATIONS, *INITIATOR_ANNOTATIONS) if k in allowed
            ]
            hint = nearest(name, others)
            msg = f"unknown annotation '@{name}' on {where}" + (hint.replace(" '", " '@", 1) if hint else "")
            if name in CHANNEL_ANNOTATIONS or name in EXIT_ANNOTATIONS:
                msg = f"'@{name}' does not apply to {where}; allowed: {', '.join('@' + k for k in allowed)}"
            raise ctx.fail(msg, a.name.span)
        repeatable = name == "collect" or (
            name == "stop" and name in seen and not (seen[name].args and a.args)
        )
        if name in seen and not repeatable:
            msg = f"'@{name}' is given twice"
            raise ctx.fail(msg, a.span)
        lo, hi = allowed[name]
        n = len(a.args or ())
        if not lo <= n <= hi:
            want = (
                "no arguments"
                if hi == 0
                else (f"{lo} argument(s)" if lo == hi else f"{lo} to {hi} arguments")
            )
            msg = f"'@{name}' takes {want}, got {n}"
            raise ctx.fail(msg, a.span)
        seen[name] = a
    return seen
