"""The engine's fused loop: in-order events through the host's routing and every matcher's step.

:meth:`Engine.process_many <workbench.engine.runtime.Engine.process_many>` spends most of its time
in the layers between an event and a partial match: stamping, the clock, routing by type, the key's
state, the host's context, the plan's ``process`` and its idle test. :func:`build_loop` writes one
function per engine that does all of that inline for the common case -- event time, no
out-of-orderness, events in order, nothing buffered -- and pastes in the
:class:`~workbench.engine.matcher.Kernel` of every matcher that offers one (when tracing is off);
any other matcher is called through its ``process`` as the host does. The loop returns to the
engine at the first event it cannot take (late or out of order), which the engine handles the
general way before resuming the loop.

The loop keeps the clock in locals and writes it back when it returns, raises or lets the engine
fire due timers, so the engine's state between two events is exactly the general path's.

:func:`build_step` writes the same body once more as ``step(event, out)``, for
:meth:`Engine.process <workbench.engine.runtime.Engine.process>`: one call per event then pays
for the clock and the event's work, not for setting up a loop.
"""

from __future__ import annotations

import heapq
import math
import textwrap
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from workbench.engine import native
from workbench.engine.clock import EventClock, stamp
from workbench.engine.detection import Detection
from workbench.engine.events import Event, EventLike
from workbench.engine.host import KeyState
from workbench.engine.matcher import Kernel, Matcher
from workbench.engine.nfa.conditions import Source, build_function
from workbench.engine.outputs import Outputs

if TYPE_CHECKING:
    from workbench.engine.runtime import Engine

__all__ = ["Loop", "Step", "build_loop", "build_step"]

#: ``loop(engine, events, out)``: ``None`` when the events ran out, else the stamped event the
#: engine must handle the general way and its input position; ``out`` gets the call's detections
Loop = Callable[["Engine", Iterator[EventLike], "list[Detection]"], "tuple[Event, int] | None"]
#: ``step(event, out)``: the loop's work for one event (same result), made per engine by ``build_step``
Step = Callable[[EventLike, "list[Detection]"], "tuple[Event, int] | None"]

#: the engine's parts a loop or a step reads once (a step binds them when it is made: see ``Step``)
_BOUND = """\
clock = engine.event_clock
pending = engine._pending
keys = engine._keys
keys_get = keys.get
timers = engine._timers
timer_seq = engine._timer_seq
host_fire = engine.host.fire
ctx = engine.host.context
"""

#: the clock in locals, read at the start of a call (and written back by ``_sync`` at its end)
_CLOCK = """\
seen = clock.max_seen
wm, closed = clock.watermark
lo = wm if wm > seen else seen
closed_at = wm if closed and wm >= seen else None
pos = clock.next_seq
"""

#: one event ``e``: stamping, the clock, due timers, routing, every matcher's step, delivery
_BODY = """\
p = pos
pos = p + 1
# why: a stamped event of the usual types needs no validation call (stamp() decides)
if e.__class__ is not _Event or e.seq < 0:
    e = _stamp(e, p)
t = e.time
key = e.key
# why t - t: a NaN or infinite float time (of an event stamped already) is checked too
if not ((t.__class__ is _int or (t.__class__ is _float and t - t == 0))
        and e.type.__class__ is _str
        and (key.__class__ is _str or key.__class__ is _int or key is None)):
    e = _stamp(e, p)
    t = e.time  # why: stamping makes a numpy time a built-in number,
    key = e.key  # and a NaN key the key None
if t <= lo and (t < lo or t == closed_at):
    return e, p  # why: late or out of order: the engine's general path
lo = seen = t
if timers and timers[0][0] < t:  # why: timers before t are due (nothing is buffered)
    clock.next_seq = pos  # why: _sync inline: a timer may read the clock
    clock.max_seen = seen
    if (seen, False) > clock.watermark:
        clock.watermark = (seen, False)
    while timers and timers[0][0] < t:
        tt, _, tkey, tp, token = _heappop(timers)
        tks = keys_get(tkey)
        if tks is None:
            tks = keys[tkey] = _KeyState()
{fire}        if not (tks.states or tks.instances or tks.timer_counts):
            del keys[tkey]
        if pending:  # why: the timer's transitions are complete: the engine delivers
            engine._after(tt, out)
            pos = clock.next_seq  # why: events fed back by a callback took positions
{route}if pending:  # why: the event's transitions are complete: the engine delivers
    # why read here: only an event with outputs needs to know where they go
    plain = engine._on_detection is None and engine.derive is None and engine.__class__.deliver is _deliver
    for d in pending:
        if not plain or d.__class__ is not _Detection or d.extra:
            break  # why: a callback, counter, fed event or other output: deliver() does it
    else:  # why: only detections that are just collected (or not even that): deliver()'s work, inline
        out += pending
        if engine.collect:
            engine.detections += pending
        pending.clear()
if pending:
    _sync(clock, seen, pos)
    if engine._settle(out):  # why: it processed events fed back: reread the clock
{reread}"""

_LOOP = """\
def loop(engine, it, out):
{bound}{clock}{setup}    try:
        for e in it:
{body}    finally:
        _sync(clock, seen, pos)
    return None
"""

#: the body once, for one event: ``continue`` (nothing more to do for it) leaves the one-item loop
_STEP = """\
def make_step(engine):
{bound}    def step(e0, out):
{clock}{setup}        try:
            for e in (e0,):
{body}        finally:
            # why not _sync: one call per event costs more than its three lines
            clock.next_seq = pos
            clock.max_seen = seen
            if (seen, False) > clock.watermark:
                clock.watermark = (seen, False)
        return None
    return step
"""


#: what a matcher's context holds for the event being processed (kernels set it where they use it)
_CONTEXT = "ctx.key = key; ctx.now = t; ctx.keystate = ks"


def _sync(clock: EventClock, seen: float, pos: int) -> None:
    """Write the loop's clock back: newest time, watermark (no out-of-orderness), next position."""
    clock.next_seq = pos
    clock.max_seen = seen
    candidate = (seen, False)
    if candidate > clock.watermark:
        clock.watermark = candidate


class _Writer:
    def __init__(self, matchers: Sequence[Matcher], tracing: bool) -> None:
        self.src = Source("_f")
        self.c = self.src.const
        self.matchers = matchers
        self.kernels: list[Kernel | None] = [
            None if tracing else _kernel(m, pindex) for pindex, m in enumerate(matchers)
        ]
        self.single = len(matchers) == 1
        self.tracing = tracing

    def write(self, template: str) -> str:
        """``template`` (:data:`_LOOP` or :data:`_STEP`) with these matchers' routing and steps."""
        c = self.c
        setup = ""
        if self.single:  # why: one matcher: the context names it once per call
            setup = f"ctx.pindex = 0\nctx.pattern = {c(self.matchers[0].name)}\n"
        route = _Lines(0)
        wants = [m.event_types() for m in self.matchers]
        if all(w is not None for w in wants):  # why: events no pattern uses only move the clock
            union = frozenset().union(*(w for w in wants if w is not None))
            route.add(f"if e.type not in {c(union)}:", "    continue")
        route.add("ks = keys_get(key)", "if ks is None:")
        starts = [self.starts(i, w) for i, w in enumerate(wants)]
        if all(s is not None for s in starts):  # why: no matcher would keep a state for it
            route.add(f"    if not ({' or '.join(s for s in starts if s is not None)}):", "        continue")
        route.add(f"    ks = keys[key] = {c(KeyState)}()")
        route.add("states = ks.states")
        for pindex, w in enumerate(wants):
            self.block(route, pindex, w if not self.single else None)
        route.add("if not states and not ks.instances and not ks.timer_counts:", "    del keys[key]")
        body = _BODY.format(fire=self.fire(), route=route.text(), reread=textwrap.indent(_CLOCK, "        "))
        depth = "    " if template is _LOOP else "        "  # why: a step is nested in its maker
        return template.format(
            bound=textwrap.indent(_BOUND, "    "),
            clock=textwrap.indent(_CLOCK, depth),
            setup=textwrap.indent(setup, depth),
            body=textwrap.indent(body, depth + "        "),
        )

    def fire(self) -> str:
        """One due timer: a matcher with a kernel directly (as :meth:`KeyHost.fire`), else the host."""
        c, out = self.c, _Lines(2)
        branch = "if"
        for pindex, m in enumerate(self.matchers):
            if self.kernels[pindex] is None:
                continue
            out.add(f"{branch} tp == {pindex}:")
            out.depth += 1
            out.add("counts = tks.timer_counts", f"counts[{pindex}] -= 1", f"st = tks.states.get({pindex})")
            out.add("if st is None:", f"    st = tks.states[{pindex}] = {c(m.new_state)}(tkey)")
            if not self.single:  # why: one matcher: the loop's set-up named it
                out.add(f"ctx.pindex = {pindex}; ctx.pattern = {c(m.name)}")
            kernel = self.kernels[pindex]
            assert kernel is not None
            idle = f"{c(m.is_idle)}(st)"
            measured = self.measured(out, pindex)
            if kernel.timer is not None:  # why: the matcher's on_timer as statements, no call
                self.src.consts.update(kernel.consts)
                out.add(*kernel.timer.splitlines())
                idle = kernel.idle  # why: exact once the timer ran (a pending timer keeps the state)
            else:
                out.add("ctx.key = tkey; ctx.now = tt; ctx.keystate = tks")
                # why unmeasured: for a matcher with measures, the lines after the call add them
                out.add(f"{c(getattr(m, 'unmeasured_on_timer', m.on_timer))}(st, tt, token, ctx)")
            out.add(*measured)
            # why: as the host: an idle state is dropped unless a timer of it is still pending
            out.add(f"if {idle} and not counts.get({pindex}):")
            out.add(f"    counts.pop({pindex}, None)", f"    del tks.states[{pindex}]")
            out.add("    if ctx.forget:", f"        ctx.forget_instances(tks, {pindex})")
            out.depth -= 1
            branch = "elif"
        if branch == "if":
            out.add("host_fire(tks, tkey, tt, tp, token)")
        else:
            out.add("else:", "    host_fire(tks, tkey, tt, tp, token)")
        return out.text()

    def starts(self, pindex: int, wants: frozenset[str] | None) -> str | None:
        kernel = self.kernels[pindex]
        if kernel is None or kernel.starts is None:
            return None
        return (
            kernel.starts
            if wants is None or self.single
            else f"(e.type in {self.c(wants)} and {kernel.starts})"
        )

    def block(self, out: _Lines, pindex: int, wants: frozenset[str] | None) -> None:
        """One matcher's turn: its state, its step, the release of an idle state (as the host)."""
        c, m, kernel = self.c, self.matchers[pindex], self.kernels[pindex]
        if wants is not None:
            out.add(f"if e.type in {c(wants)}:")
            out.depth += 1
        out.add(f"st = states.get({pindex})")
        if kernel is not None and kernel.starts is not None:
            out.add(f"if st is None and {kernel.starts}:")
        else:
            out.add("if st is None:")
        out.add(f"    st = states[{pindex}] = {c(m.new_state)}(key)")
        out.add("if st is not None:")
        out.depth += 1
        if not self.single:
            out.add(f"ctx.pindex = {pindex}", f"ctx.pattern = {c(m.name)}")
        if kernel is not None:
            self.src.consts.update(kernel.consts)
            measured = self.measured(out, pindex)
            out.add(*_with_context(kernel.body))
            out.add(*measured)
            idle = kernel.idle
        else:
            # why the cause only when tracing: only trace records name it (a kernel never traces)
            context = _CONTEXT + "; ctx.cause = e.seq" if self.tracing else _CONTEXT
            out.add(context, f"{c(m.process)}(st, e, ctx)")
            idle = f"{c(m.is_idle)}(st)"
        # why: an idle state is dropped at once, unless a timer of it is still pending
        out.add(f"if {idle} and not ks.timer_counts.get({pindex}):")
        out.add(f"    ks.timer_counts.pop({pindex}, None)", f"    del states[{pindex}]")
        out.add("    if ctx.forget:", f"        ctx.forget_instances(ks, {pindex})")
        out.depth -= 1
        if wants is not None:
            out.depth -= 1

    def measured(self, out: _Lines, pindex: int) -> list[str]:
        """For a kernel of a matcher with measures: the line that notes where its detections will
        start in ``pending`` (added to ``out`` now) and the lines that add the measures to them
        (to add after the kernel's own lines); nothing for a matcher without measures."""
        measures = getattr(self.matchers[pindex], "measures", None)
        if measures is None:
            return []
        out.add("n0 = _len(pending)")
        # why after: a kernel queues its detections itself, past the context's emit
        return ["if _len(pending) > n0:", f"    _measure(pending, n0, {self.c(measures.apply)})"]


def _measure(pending: list[object], start: int, apply: Callable[[Detection], Detection]) -> None:
    """The measures added to the detections a kernel queued from ``pending[start]`` on (all of one
    matcher: nothing else runs in between)."""
    for i in range(start, len(pending)):
        d = pending[i]
        if d.__class__ is Detection:
            pending[i] = apply(d)


class _Lines:
    def __init__(self, depth: int) -> None:
        self.lines: list[str] = []
        self.depth = depth

    def add(self, *lines: str) -> None:
        self.lines.extend("    " * self.depth + line for line in lines)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _with_context(body: str) -> list[str]:
    """The kernel's lines with each ``{ctx}`` line (only a whole line: never text in a literal) filled in."""
    lines = body.splitlines()
    return [line.replace("{ctx}", _CONTEXT) if line.strip() == "{ctx}" else line for line in lines]


def _kernel(matcher: Matcher, pindex: int) -> Kernel | None:
    offer = getattr(matcher, "kernel", None)
    kernel = offer(pindex) if offer is not None else None
    return kernel if isinstance(kernel, Kernel) else None


def build_loop(matchers: Sequence[Matcher], *, tracing: bool) -> Loop:
    """The fused loop of an engine with these matchers (kernels are used only when not tracing)."""
    loop: Loop | None = _native_loop(matchers, tracing)
    if loop is None:
        loop = _build(_Writer(matchers, tracing), _LOOP, "loop", "<engine loop>")
    return loop


def _native_loop(matchers: Sequence[Matcher], tracing: bool) -> Loop | None:
    """The native core's twin of the generated loop, for an engine whose one pattern runs a native
    loop step with the loop plan's kernel and no measures (``None`` otherwise: the generated loop)."""
    core = native.MODULE
    if core is None or tracing or len(matchers) != 1:
        return None
    m = matchers[0]
    step = getattr(getattr(m, "plan", None), "process", None)
    if not isinstance(step, core.LoopStep) or getattr(m, "measures", None) is not None:
        return None
    if _kernel(m, 0) is None:  # why: the generated loop would call the matcher, not the plan's kernel
        return None
    feed: Loop = core.LoopFeed(
        step=step,
        name=m.name,
        union=m.event_types(),
        new_state=m.new_state,
        is_idle=m.is_idle,
        on_timer=getattr(m, "unmeasured_on_timer", m.on_timer),
        stamp=stamp,
        sync=_sync,
        key_state=KeyState,
        detection=Detection,
        event=Event,
        deliver=Outputs.deliver,
        outputs_emit=Outputs.emit,
    )
    return feed


def build_step(matchers: Sequence[Matcher], *, tracing: bool) -> Callable[[Engine], Step]:
    """``make_step(engine)``: the fused loop's work for one event, as ``step(event, out)``.

    The step binds the engine's key table, timers, counter, pending list and context when it is
    made, so the engine drops it whenever it replaces one of them (a snapshot's image, a restore,
    a new pattern) and makes another on the next event; it reads the clock at every call.
    """
    make: Callable[[Engine], Step] = _build(_Writer(matchers, tracing), _STEP, "make_step", "<engine step>")
    return make


def _build(writer: _Writer, template: str, name: str, filename: str) -> Callable[..., Any]:
    source = writer.write(template)
    namespace: dict[str, object] = {
        "_Event": Event,
        "_Detection": Detection,
        "_deliver": Outputs.deliver,
        "_KeyState": KeyState,
        "_heappop": heapq.heappop,
        "_heappush": heapq.heappush,
        "_next": next,
        "_stamp": stamp,
        "_sync": _sync,
        "_measure": _measure,
        "_len": len,
        "_int": int,
        "_float": float,
        "_str": str,
        "_inf": math.inf,
        **writer.src.consts,
    }
    return build_function(source, name, namespace, filename)
