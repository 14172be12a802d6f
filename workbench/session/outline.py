"""A plain-text outline of a compiled pattern (what ``%cep show`` prints under the pattern text).

For a sequence: a state diagram of its stages (``start -> down+ -> up``) and one line per stage
with its contiguity, count, windows and condition. For a reaction group: the operator tree with each
channel's type and annotations.
"""

from __future__ import annotations

from workbench.engine.nfa import pattern as seq
from workbench.engine.nfa.absence import AbsencePattern
from workbench.engine.reactions import patterns as grp
from workbench.language.printer import condition_text, follow_words, format_duration

__all__ = ["outline"]


def _count(q: seq.Quantifier) -> str:
    if q.max is None:
        text = f"{q.min}+"
    elif q.min == q.max:
        text = str(q.min)
    else:
        text = f"{q.min}..{q.max}"
    if q.optional:
        text += "?"
    if q.greedy:
        text += " greedy"
    return text


def _symbol(s: seq.Element) -> str:
    q = s.quantifier
    name = s.name
    if s.negated:
        name = "!" + name
    if q.max is None:
        name += "+" if q.min == 1 else f"{{{q.min},}}"
    elif (q.min, q.max) != (1, 1):
        name += f"{{{q.min}}}" if q.min == q.max else f"{{{q.min},{q.max}}}"
    if q.optional:
        name += "?"
    return name


def _arrow(s: seq.Element) -> str:
    return {"strict": " -> ", "relaxed": " ~> ", "nondeterministic_relaxed": " ~~> "}[str(s.contiguity)]


def _sequence(p: seq.SequencePattern) -> list[str]:
    diagram = _symbol(p.stages[0])
    for s in p.stages[1:]:
        diagram += _arrow(s) + _symbol(s)
    lines = [f"states: {diagram} -> (match)", "  (-> next, ~> followed by, ~~> followed by any, ! not)"]
    rows = [("stage", "follows", "count", "condition")]

    def add(stages: tuple[seq.Element, ...], depth: int) -> None:
        for i, s in enumerate(stages):
            # the first stage of a pattern or of a group of stages starts it: its contiguity is moot
            follows = "begin" if i == 0 else follow_words(s)
            if isinstance(s, seq.Alternation | seq.Permute):  # why: one row, then its branches' stages
                rows.append(
                    (
                        "  " * depth + s.name,
                        follows,
                        "1",
                        "(one branch)" if isinstance(s, seq.Alternation) else "(any order)",
                    )
                )
                for branch in s.branches if isinstance(s, seq.Alternation) else (s.elements,):
                    add(branch, depth + 1)
                continue
            if isinstance(s, seq.GroupStage):
                cond = "(group)"
            else:
                cond = condition_text(s.where) if s.where is not None else "any event"
                if s.types:
                    cond = f"{' | '.join(s.types)}: {cond}"
            if s.until is not None:
                cond += f"  [until {condition_text(s.until)}]"
            if s.within_ms is not None:
                cond += f"  [within {format_duration(s.within_ms)}]"
            if isinstance(s, seq.Stage) and s.within_prev_ms is not None:
                cond += f"  [within {format_duration(s.within_prev_ms)} of previous]"
            rows.append(("  " * depth + s.name, follows, _count(s.quantifier), cond))
            if isinstance(s, seq.GroupStage):
                add(s.stages, depth + 1)

    add(p.stages, 0)
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines.extend(
        "  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3] for r in rows
    )
    extra = []
    if p.within_ms is not None:
        extra.append(f"within {format_duration(p.within_ms)} (first to last event)")
    extra.append(
        f"after a match: {p.skip.kind.replace('_', ' ')}" + (f" {p.skip.stage}" if p.skip.stage else "")
    )
    lines.extend(extra)
    return lines


def _channel(c: grp.Channel) -> str:
    flags = []
    for name in ("negated", "stop", "paused", "optional"):
        if getattr(c, name):
            flags.append("@not" if name == "negated" else f"@{name}")
    for name in ("stop_ids", "pause_ids", "resume_ids", "after"):
        ids = getattr(c, name)
        if ids:
            flags.append(f"@{name.removesuffix('_ids')}({', '.join(ids)})")
    if c.count is not None:
        flags.append(f"@count({c.count.min},{c.count.max},{c.count.mode})")
    if c.size is not None:
        flags.append(f"@size({c.size.n}{'' if c.size.reset is None else f',{c.size.reset}'})")
    if c.timer is not None:
        flags.append(f"@timer({format_duration(c.timer.delay_ms)})")
    if c.hop is not None:
        flags.append(f"@hop({format_duration(c.hop.size_ms)}, {format_duration(c.hop.hop_ms)})")
    if c.timeout_ms is not None:
        flags.append(f"@timeout({format_duration(c.timeout_ms)})")
    if c.vars:
        flags.append(f"@vars({', '.join(v for v, _ in grp.pairs(c.vars))})")
    where = f" where {condition_text(c.where)}" if c.where is not None else ""
    items = [f"{f} = {v.name if isinstance(v, grp.Var) else repr(v)}" for f, v in grp.pairs(c.match)]
    items += [f"{f} as {v}" for v, f in (*grp.pairs(c.binds), *grp.pairs(c.vars))]
    head = f"{c.type or 'any'}({', '.join(items)})" if items else (c.type or "any")
    return f"{c.id}: {head}{where}  {' '.join(flags)}".rstrip()


def _group(g: grp.ReactionGroup, depth: int) -> list[str]:
    pad = "  " * depth
    head = f"{pad}{g.operator.upper()} {g.name}"
    if g.timeout_ms is not None:
        head += f"  timeout {format_duration(g.timeout_ms)}"
    lines = [head]
    for m in g.channels:
        if isinstance(m, grp.ReactionGroup):
            lines.extend(_group(m, depth + 1))
        else:
            lines.append(f"{pad}  - {_channel(m)}")
    return lines


def outline(pattern: object) -> str:
    """The outline text of a sequence pattern or a reaction group."""
    if isinstance(pattern, seq.SequencePattern):
        return "\n".join(_sequence(pattern))
    if isinstance(pattern, AbsencePattern):
        s = pattern.silence
        what = " | ".join(s.types) or "any"
        cond = f" where {condition_text(s.where)}" if s.where is not None else ""
        again = "each absent event and each detection" if s.every else "each absent event"
        span = format_duration(s.for_ms)
        head = f"silence: no {s.name} ({what}{cond}) for {span} per key; restarts at {again}"
        rest = _sequence(pattern.then) if pattern.then is not None else []
        return "\n".join([head, *(f"then {line}" if i == 0 else line for i, line in enumerate(rest))])
    if isinstance(pattern, grp.ReactionGroup):
        lines = []
        ini = pattern.initiator
        if ini is not None:
            binds = ", ".join(f"{v} = {f}" for v, f in grp.pairs(ini.bind))
            lines.append(
                f"instances: one per {'' if ini.mult else 'first '}{ini.type or 'event'} event"
                + (f" (binds {binds})" if binds else "")
            )
        elif pattern.instances:
            lines.append(f"instances: {len(pattern.instances)} created at start-up")
        lines.extend(_group(pattern, 0))
        return "\n".join(lines)
    if isinstance(pattern, grp.Receive):
        limit = "every" if pattern.count in (None, -1) else f"the first {pattern.count}"
        return f"receive: one detection for {limit} matching {pattern.type or 'any'} event(s) per key"
    return repr(pattern)
