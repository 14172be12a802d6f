"""The source templates of the loop plan's generated ``process`` (:mod:`~workbench.engine.nfa.loopgen`).

Pure text: :func:`~workbench.engine.nfa.loopgen.generate` fills the ``{...}`` holes with code
written from IR nodes and with names of its namespace, never with user text.
"""

from __future__ import annotations

__all__ = ["CAP", "CLOCK", "EXPIRE", "FRESH", "HEAD", "WAKE"]

HEAD = """\
def process(state, e, ctx):
    if ctx.tracing:
        return _interp(state, e, ctx)
    t = e.time
    hot = state.hot
    cold = state.cold
    last = state.last
"""
EXPIRE = """\
    if (hot and hot[0].start_ts + _W <= t) or (cold and cold[0].start_ts + _W <= t) or (
        last and last[0].start_ts + _W <= t
    ):
        _advance(state, t, ctx)
        hot = state.hot
        cold = state.cold
        last = state.last
    elif state.time is None or t > state.time:
        state.time = t
"""
CLOCK = """\
    if state.time is None or t > state.time:
        state.time = t
"""
WAKE = """\
    typ = e.type
    starts = {starts}
    vc = {vc}
    vl = {vl}
    if not hot and not vc and not vl and not starts:
        return
    try:
{probes}
    except _Exception:
        return _interp(state, e, ctx)
    # why the keys: a start event starts one partial match, so the loop's (hot and cold) have
    # distinct start ids and sort by them alone; those waiting for the last stage share them
    if vc:
        if vl:
            runs = sorted(hot + cold + last, key=_by_start)
        else:
            runs = sorted(hot + cold, key=_by_sid) if hot else cold
    elif vl:
        runs = sorted(hot + last, key=_by_start) if hot else last
    else:
        runs = hot
    nh = []
    nc = [] if vc else cold
    nl = [] if vl else last
    nc0 = len(nc)
    nl0 = len(nl)
    done = []
    wk = _wt.get(typ, _wdef)
    rid = state.next_rid
    key = ctx.key
    try:
        if runs is last and {all_complete}:
            # why: only the waits for the last stage are visited and the event completes every one
            rid += len(runs)
            done = [
                _Detection(_name, key, r.inst, "match", t, (*r.events, e), _chan[len(r.events) + 1])
                for r in runs
            ]
            runs = ()
        for run in runs:
            code = run.code
            if code == -2:
                if lp:
                    rid += 1
{complete}
                    ev = (*run.events, e)
                    done.append(_Detection(_name, key, run.inst, "match", t, ev, _chan[len(ev)]))
                else:
                    nl.append(run)
                continue
            if not wk[code]:
                (nh if code == 0 else nc).append(run)
                continue
{took}
            if code == 0:
                r0 = rid
                rid += 2
                taken = run.events
                prev = run.prev_ts
                if took:
                    run.rid = r0
                    run.prev_ts = t
{update20}
                    run.events = (*taken, e)
                    nh.append(run)
                else:
                    run.rid = r0
                    run.code = -1
                    nc.append(run)
{fresh_run}
                if lp:
{complete}
                    ev = (*taken, e)
                    done.append(_Detection(_name, key, run.inst, "match", t, ev, _chan[len(ev)]))
                else:
                    w = _LoopRun(run.start_id, r0 + 1, -2, run.start_ts, prev, run.inst, taken, ())
                    nl.append(w)
{fresh_w}
            elif took:
                run.rid = rid
                rid += 1
                run.code = 0 if code <= 1 else code - 1
                run.prev_ts = t
{update16}
                run.events = (*run.events, e)
                (nh if code <= 1 else nc).append(run)
{fresh_run}
            else:
                nc.append(run)
        # why: successors are appended in visiting order, so nh is sorted, and so is nc when cold
        # was visited; else nc is the old sorted cold plus sorted successors: compare at the seam
        cs = not vc and nc0 and len(nc) != nc0 and nc[nc0 - 1].start_id > nc[nc0].start_id
        if starts and {start_test}:
            inst = ctx.new_instance()
            r0 = rid
            rid += 1
            run = _LoopRun((t, e.seq), r0, _N, t, t, inst, (e,), {start_aggs})
            if nc and not cs and nc[-1].start_id > run.start_id:
                cs = True
            nc.append(run)
{fresh_start}
    finally:
        state.next_rid = rid
    if cs:
        nc.sort(key=_by_sid)
    # why: visited, nl holds only waits that the event did not complete and new waits (none
    # when the last stage took it); unvisited, nl is the old (sorted) list plus the new waits,
    # which are sorted (visiting order, rising run ids): one comparison at the seam tells, and the
    # new waits' run ids exceed the old ones', so a stable sort by start id alone orders the whole
    if vl and not lp:
        nl.sort(key=_by_start)
    elif nl0 and len(nl) != nl0 and nl[nl0 - 1].start_id > nl[nl0].start_id:
        nl.sort(key=_by_sid)
    state.hot = nh
    state.cold = nc
    state.last = nl
    if done:
        emit = ctx.emit
        for d in done:
            emit(d)
{cap}"""
FRESH = """\
if {run}.prev_ts == {run}.start_ts and state.scheduled != {run}.start_ts + _W:
    state.scheduled = {run}.start_ts + _W
    ctx.schedule(state.scheduled, WINDOW_TIMER)
"""
CAP = """\
    if len(nh) + len(nc) + len(nl) > _CAPN:
        _capfn(state, ctx, _CAPN)
"""
