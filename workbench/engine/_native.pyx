# cython: language_level=3
"""The engine's native core: compiled twins of pure-Python functions, on the same objects.

Built from this file by the package's own build (``setup.py``) when Cython and a C compiler are at
hand; without them the package is pure Python, with the same behaviour. Each function here has a
pure-Python twin that stays the reference (tests compare the two), and ``WORKBENCH_PURE=1`` keeps
the twins in use (:mod:`workbench.engine.native`).

The native code works on the engine's own slotted dataclasses: it stores a slot at the offset
that the slot's member descriptor names, as CPython's own specialised attribute stores do. No
second model of any object exists, so snapshots, traces and explain see the same objects.
"""

from cpython.object cimport Py_EQ, Py_GE, Py_GT, Py_LE, Py_LT, Py_NE, PyObject, PyObject_RichCompare, PyObject_RichCompareBool
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_XDECREF
from cpython.method cimport PyMethod_Check, PyMethod_GET_FUNCTION, PyMethod_GET_SELF
from cpython.dict cimport PyDict_GetItem
from cpython.set cimport PySet_Contains
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND
from libc.string cimport memcmp


cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    PyObject* PyType_GenericAlloc(object cls, Py_ssize_t nitems) except NULL
    void PyObject_GC_UnTrack(void* obj)
    long long PyLong_AsLongLongAndOverflow(object obj, int* overflow) except? -1
    double PyFloat_AS_DOUBLE(object obj)
    bint __builtin_ssubll_overflow(long long a, long long b, long long* out)
    ctypedef struct PyListObject:
        PyObject** ob_item
    Py_ssize_t PyList_GET_SIZE(object lst)
    PyObject* PyList_GET_ITEM(object lst, Py_ssize_t i)
    bint PyLong_CheckExact(PyObject* obj)
    bint PyFloat_CheckExact(PyObject* obj)
    bint PyTuple_CheckExact(PyObject* obj)
    int PyList_SetSlice(object lst, Py_ssize_t low, Py_ssize_t high, PyObject* itemlist) except -1


#: the slots of Detection in field order, as this file stores them
_DETECTION_SLOTS = (
    "pattern", "key", "instance", "kind", "time", "events", "channels", "negated", "initiator",
    "extra", "measures",
)

cdef object _detection = None
cdef object _no_measures = None
cdef Py_ssize_t _offsets[11]


cdef inline void _store(PyObject* obj, Py_ssize_t offset, object value):
    """Store ``value`` in the empty slot at ``offset`` of a new object (which then owns a reference)."""
    Py_INCREF(value)
    (<PyObject**>((<char*>obj) + offset))[0] = <PyObject*>value


def bind_detection(cls, no_measures):
    """Make :func:`new_match` build instances of ``cls`` (the ``Detection`` dataclass).

    ``cls`` must have exactly the slots this file stores, each a plain member descriptor, else a
    ``TypeError`` (the caller then keeps the pure-Python ``new_match``).
    """
    global _detection, _no_measures
    offsets = _exact_offsets(cls, _DETECTION_SLOTS)
    for i in range(11):
        _offsets[i] = offsets[i]
    _detection = cls
    _no_measures = no_measures
    return new_match


def new_match(pattern, key, instance, kind, time, events, channels):
    """``Detection(pattern, key, instance, kind, time, events, channels)`` with the default optional
    fields (the twin of ``detection._new_match_python``)."""
    return _build_match(pattern, key, instance, kind, time, events, channels)


cdef object _build_match(object pattern, object key, object instance, object kind, object time,
                         object events, object channels):
    """:func:`new_match`, for the native code's own calls."""
    if _detection is None:
        raise RuntimeError("bind_detection() was not called")
    cdef PyObject* d = PyType_GenericAlloc(_detection, 0)
    _store(d, _offsets[0], pattern)
    _store(d, _offsets[1], key)
    _store(d, _offsets[2], instance)
    _store(d, _offsets[3], kind)
    _store(d, _offsets[4], time)
    _store(d, _offsets[5], events)
    _store(d, _offsets[6], channels)
    _store(d, _offsets[7], ())
    _store(d, _offsets[8], None)
    _store(d, _offsets[9], {})
    _store(d, _offsets[10], _no_measures)
    out = <object>d  # why: a new reference; the allocation's own is released below
    Py_DECREF(out)
    # why untracked: the cyclic collector would walk every detection kept, again at each collection
    # of its generation (a third of a loop pattern's stream time). A detection and its events tuple
    # take part in no cycle: their events are frozen; only a mutable field made to refer back to
    # them later (an event's fields, extra) could close one, and such a cycle is then not collected
    PyObject_GC_UnTrack(d)
    if type(events) is tuple:
        PyObject_GC_UnTrack(<PyObject*>events)
    return out


# ---------------------------------------------------------------------------------- the loop plan
#: the slots of nfa.loop.LoopRun in field order, as this file reads and stores them
_LOOP_RUN_SLOTS = ("start_id", "rid", "code", "start_ts", "prev_ts", "inst", "events", "aggs")
cdef enum:  # the slot numbers, in _LOOP_RUN_SLOTS order
    START_ID, RID, CODE, START_TS, PREV_TS, INST, EVENTS, AGGS

cdef object _loop_run = None
cdef Py_ssize_t _run_offsets[8]


def bind_loop_run(cls):
    """Make the loop step read and build instances of ``cls`` (``nfa.loop.LoopRun``)."""
    global _loop_run
    offsets = _exact_offsets(cls, _LOOP_RUN_SLOTS)
    for i in range(8):
        _run_offsets[i] = offsets[i]
    _loop_run = cls


cdef inline object _get(object run, int i):
    """Slot ``i`` of the partial match ``run`` (checked: a ``LoopRun`` whose slot is set)."""
    cdef PyObject* value
    if type(run) is _loop_run:
        value = (<PyObject**>((<char*><PyObject*>run) + _run_offsets[i]))[0]
        if value != NULL:
            return <object>value
    return _not_a_run(run, i)  # why apart: the raising path stays out of every inlined read


cdef object _not_a_run(object run, int i):
    """Raise for ``_get`` (``run`` is no ``LoopRun``, or slot ``i`` is not set)."""
    if type(run) is not _loop_run:
        raise TypeError(f"a loop plan's state holds {type(run).__name__!r}, not a partial match")
    raise AttributeError(f"a partial match has no {_LOOP_RUN_SLOTS[i]!r}")


cdef inline void _set(object run, int i, object value):
    """Replace slot ``i`` of ``run`` (already checked by a ``_get`` of the same step)."""
    cdef PyObject** slot = <PyObject**>((<char*><PyObject*>run) + _run_offsets[i])
    cdef PyObject* old = slot[0]
    Py_INCREF(value)
    slot[0] = <PyObject*>value
    Py_XDECREF(old)


cdef object _new_run(object start_id, object rid, object code, object start_ts, object prev_ts,
                     object inst, tuple events, tuple aggs):
    """``LoopRun(start_id, rid, code, start_ts, prev_ts, inst, events, aggs)``."""
    cdef PyObject* run = PyType_GenericAlloc(_loop_run, 0)
    _store(run, _run_offsets[START_ID], start_id)
    _store(run, _run_offsets[RID], rid)
    _store(run, _run_offsets[CODE], code)
    _store(run, _run_offsets[START_TS], start_ts)
    _store(run, _run_offsets[PREV_TS], prev_ts)
    _store(run, _run_offsets[INST], inst)
    _store(run, _run_offsets[EVENTS], events)
    _store(run, _run_offsets[AGGS], aggs)
    out = <object>run
    Py_DECREF(out)
    # why untracked: the collector would walk every live partial match at each collection of its
    # generation (thousands on a busy key). A partial match holds numbers, a start id, frozen events
    # and aggregates of numbers: it closes no cycle, unless user code makes an event's fields refer
    # back to it, and such a cycle would then not be collected (as for detections, new_match)
    PyObject_GC_UnTrack(run)
    return out


cdef int _order(object a, object b) except -2:
    """-1 when ``a < b``; 0 when ``a == b``; 1 otherwise. For two tuples of one length (start ids:
    a time and an arrival position) item by item, as Python compares tuples (the first items that
    are not equal decide, by ``<``); for anything else by ``==``, then ``<``."""
    cdef Py_ssize_t i
    cdef int eq
    if type(a) is tuple and type(b) is tuple and PyTuple_GET_SIZE(a) == PyTuple_GET_SIZE(b):
        for i in range(PyTuple_GET_SIZE(a)):
            eq = _item_lt(PyTuple_GET_ITEM(a, i), PyTuple_GET_ITEM(b, i))
            if eq == 2:
                continue  # why: equal numbers (or the same object): the next items decide
            if eq >= 0:
                return -1 if eq else 1  # why: two numbers C compared, as Python would
            x = <object>PyTuple_GET_ITEM(a, i)
            y = <object>PyTuple_GET_ITEM(b, i)
            eq = PyObject_RichCompareBool(x, y, Py_EQ)  # why: an item that is the other is equal
            if not eq:
                return -1 if PyObject_RichCompareBool(x, y, Py_LT) else 1
        return 0
    if PyObject_RichCompareBool(a, b, Py_EQ):
        return 0
    return -1 if PyObject_RichCompareBool(a, b, Py_LT) else 1


cdef inline bint _before(object a, object b, bint by_rid) except -1:
    """Whether partial match ``a`` sorts before ``b`` as their keys compare: ``start_id`` alone, or
    (``by_rid``) ``(start_id, rid)``."""
    sa, sb = _get(a, START_ID), _get(b, START_ID)
    if not by_rid:
        if type(sa) is tuple and type(sb) is tuple and PyTuple_GET_SIZE(sa) == PyTuple_GET_SIZE(sb):
            return _order(sa, sb) < 0
        return sa < sb
    cdef int c = _order(sa, sb)  # why: a key tuple's items compare by == first, then <
    return c < 0 if c else _get(a, RID) < _get(b, RID)


cdef int _settle(list xs, Py_ssize_t n0, bint by_rid) except -1:
    """Put ``xs`` in the order a stable sort by start id (then run id, ``by_rid``) gives, when
    ``xs[:n0]`` is in that order already: each later element moves back to just after the last one
    that does not sort after it. (A few partial matches join a sorted list: one comparison each
    when they are in place, a binary search when not, where a sort would compare them all.)"""
    cdef Py_ssize_t i, lo, hi, mid
    for i in range(n0 if n0 > 1 else 1, len(xs)):
        x = xs[i]
        if not _before(x, xs[i - 1], by_rid):
            continue  # why: in place, after everything before it
        lo, hi = 0, i - 1  # why: xs[i - 1] sorts after x; find the first one that does
        while lo < hi:
            mid = (lo + hi) // 2
            if _before(x, xs[mid], by_rid):
                hi = mid
            else:
                lo = mid + 1
        del xs[i]
        xs.insert(lo, x)
    return 0


cdef inline tuple _plus(tuple events, object e):
    """``(*events, e)``."""
    cdef Py_ssize_t n = PyTuple_GET_SIZE(events), i
    cdef tuple out = PyTuple_New(n + 1)
    cdef PyObject* item
    for i in range(n):
        item = PyTuple_GET_ITEM(events, i)
        Py_INCREF(<object>item)
        PyTuple_SET_ITEM(out, i, <object>item)
    Py_INCREF(e)
    PyTuple_SET_ITEM(out, n, e)
    PyObject_GC_UnTrack(<PyObject*>out)  # why: a tuple of frozen events (see new_match)
    return out


# ------------------------------------------------------------------------------ the timer heap
# ``heapq.heappush``/``heappop``'s twins for the engine's timers, ``(time, seq, key, pindex, token)``:
# the same algorithm as CPython's ``_heapq`` (the same moves, so the list holds the same arrangement
# and either can follow the other), with the two leading numbers compared in C. A timer's ``seq`` is
# unique, so two timers compare by their time and then their seq, as tuples do.

cdef extern from *:
    """
    /* The value of an exact int in ``out``; 0 when it needs more than 64 bits. Before Python 3.12,
       an int of at most two 30-bit digits (a time in ms, a position) is read from its digits. */
    static inline int wb_as_ll(PyObject* x, long long* out) {
    #if PY_VERSION_HEX < 0x030C0000 && defined(PyLong_SHIFT) && PyLong_SHIFT == 30
        const digit* d = ((PyLongObject*)x)->ob_digit;
        switch (Py_SIZE(x)) {
            case 0: *out = 0; return 1;
            case 1: *out = (long long)d[0]; return 1;
            case -1: *out = -(long long)d[0]; return 1;
            case 2: *out = (long long)d[0] | ((long long)d[1] << 30); return 1;
            case -2: *out = -((long long)d[0] | ((long long)d[1] << 30)); return 1;
        }
    #endif
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        *out = v;
        return 1;
    }
    """
    bint _as_ll "wb_as_ll" (PyObject* x, long long* out) noexcept


cdef extern from *:
    """
    /* Whether a string's characters are in place (always, from Python 3.12). */
    static inline int wb_text_ready(PyObject* s) {
    #if PY_VERSION_HEX < 0x030C0000
        return PyUnicode_IS_READY(s);
    #else
        return 1;
    #endif
    }
    """
    bint _text_ready "wb_text_ready" (object s) noexcept


cdef inline int _item_lt(PyObject* x, PyObject* y) noexcept:
    """How two tuple items compare when C can tell: 1 (``x < y``), 0 (not, and not equal), 2 (equal,
    so the next items decide); -1 when Python must compare them (other types, ints past 64 bits)."""
    cdef long long a, b
    cdef double fa, fb
    if x == y:
        return 2  # why: an item that is the other is equal, as a tuple compares (a NaN too)
    if PyLong_CheckExact(x) and PyLong_CheckExact(y):
        if not _as_ll(x, &a) or not _as_ll(y, &b):
            return -1
        return 2 if a == b else a < b
    if PyFloat_CheckExact(x) and PyFloat_CheckExact(y):
        fa, fb = PyFloat_AS_DOUBLE(<object>x), PyFloat_AS_DOUBLE(<object>y)
        return 2 if fa == fb else fa < fb  # why: not equal (NaN included), so ``<`` decides
    return -1


cdef inline int _lead_lt(PyObject* x, PyObject* y) noexcept:
    """``x < y`` (1 or 0) for two tuples whose first two items decide it in C (a timer's seq is
    unique); -1 when Python must compare them."""
    cdef int lt
    if not (PyTuple_CheckExact(x) and PyTuple_CheckExact(y)
            and PyTuple_GET_SIZE(<object>x) >= 2 and PyTuple_GET_SIZE(<object>y) >= 2):
        return -1
    lt = _item_lt(PyTuple_GET_ITEM(<object>x, 0), PyTuple_GET_ITEM(<object>y, 0))
    if lt == 2:  # why: the first items are equal: the second ones decide
        lt = _item_lt(PyTuple_GET_ITEM(<object>x, 1), PyTuple_GET_ITEM(<object>y, 1))
    return lt if lt == 0 or lt == 1 else -1


cdef inline int _heap_lt(PyObject* x, PyObject* y) except -1:
    """``x < y`` for two heap items: in C when the leading numbers decide, else by Python."""
    cdef int lt = _lead_lt(x, y)
    return lt if lt >= 0 else _python_lt(x, y)


cdef int _python_lt(PyObject* x, PyObject* y) except -1:
    """``x < y`` by Python, the items held while it may run Python code (as ``_heapq`` holds them)."""
    Py_INCREF(<object>x)
    Py_INCREF(<object>y)
    try:
        return PyObject_RichCompareBool(<object>x, <object>y, Py_LT)
    finally:
        Py_DECREF(<object>y)
        Py_DECREF(<object>x)


cdef int _sift_down(list heap, Py_ssize_t startpos, Py_ssize_t pos) except -1:
    """``_heapq``'s ``siftdown``: the item at ``pos`` moves up towards ``startpos``."""
    cdef Py_ssize_t size = PyList_GET_SIZE(heap), parentpos
    cdef PyObject** arr
    cdef PyObject* newitem
    cdef PyObject* parent
    cdef int lt
    if pos >= size:
        raise IndexError("index out of range")
    arr = (<PyListObject*>heap).ob_item
    newitem = arr[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = arr[parentpos]
        lt = _heap_lt(newitem, parent)
        if size != PyList_GET_SIZE(heap):
            raise RuntimeError("list changed size during iteration")
        if not lt:
            break
        arr = (<PyListObject*>heap).ob_item
        parent = arr[parentpos]
        newitem = arr[pos]
        arr[parentpos] = newitem
        arr[pos] = parent
        pos = parentpos
    return 0


cdef int _sift_up(list heap, Py_ssize_t pos) except -1:
    """``_heapq``'s ``siftup``: the smaller child moves up to the leaves, then ``_sift_down``."""
    cdef Py_ssize_t endpos = PyList_GET_SIZE(heap), startpos = pos, limit, childpos
    cdef PyObject** arr
    cdef PyObject* a
    cdef PyObject* b
    cdef int lt
    if pos >= endpos:
        raise IndexError("index out of range")
    arr = (<PyListObject*>heap).ob_item
    limit = endpos >> 1
    while pos < limit:
        childpos = 2 * pos + 1
        if childpos + 1 < endpos:
            a, b = arr[childpos], arr[childpos + 1]
            lt = _heap_lt(a, b)
            childpos += lt ^ 1
            arr = (<PyListObject*>heap).ob_item
            if endpos != PyList_GET_SIZE(heap):
                raise RuntimeError("list changed size during iteration")
        a, b = arr[childpos], arr[pos]
        arr[childpos] = b
        arr[pos] = a
        pos = childpos
    return _sift_down(heap, startpos, pos)


cdef int _heap_push(list heap, object item) except -1:
    heap.append(item)
    return _sift_down(heap, 0, PyList_GET_SIZE(heap) - 1)


cdef object _heap_pop(list heap):
    cdef Py_ssize_t n = PyList_GET_SIZE(heap)
    cdef PyObject** arr
    if n == 0:
        raise IndexError("index out of range")
    last = <object>((<PyListObject*>heap).ob_item[n - 1])
    PyList_SetSlice(heap, n - 1, n, NULL)
    if n == 1:
        return last
    arr = (<PyListObject*>heap).ob_item
    top = <object>arr[0]
    Py_DECREF(top)  # why: the local now owns the list's reference, as ``last`` takes its place
    Py_INCREF(last)
    arr[0] = <PyObject*>last
    _sift_up(heap, 0)
    return top


def heap_push(list heap, item):
    """``heapq.heappush(heap, item)``, natively (the same arrangement)."""
    _heap_push(heap, item)


def heap_pop(list heap):
    """``heapq.heappop(heap)``, natively (the same arrangement and item)."""
    return _heap_pop(heap)


cdef enum Takes:  # how a loop-stage aggregate takes its input (loopgen's inlined updates)
    TAKES_SUM_OR_AVG = 0
    TAKES_COUNT = 1
    TAKES_OTHER = 2
SUM_OR_AVG, COUNT, OTHER = TAKES_SUM_OR_AVG, TAKES_COUNT, TAKES_OTHER  # the same, for Python



# ------------------------------------------------------------------------------ object layouts
# The native step reads and stores the slots of the engine's own objects at their offsets (found
# through each class's member descriptors, base classes' slots included), after checking that an
# object is exactly of the bound class; an object of any other class goes to the Python twin.

cdef object _state_type = None, _event_type = None, _ctx_type = None, _sum_type = None, _avg_type = None
cdef Py_ssize_t S_HOT, S_COLD, S_LAST, S_TIME, S_NEXT_RID, S_SCHEDULED
cdef Py_ssize_t E_TYPE, E_TIME, E_SEQ, E_KEY, E_FIELDS
cdef Py_ssize_t C_TRACING, C_KEY, C_EMIT, C_NOW, C_KEYSTATE, C_PINDEX, C_BUDGET, C_SINK
cdef object _sink_schedule = None, _key_state_type = None
cdef Py_ssize_t K_STATES, K_INSTANCES, K_TIMER_COUNTS
cdef Py_ssize_t A_TOTAL, A_N


cdef Py_ssize_t _offset(object cls, str name) except -1:
    """The offset of slot ``name`` of ``cls`` (its own or a base's), or a ``TypeError``."""
    descriptor = getattr(cls, name, None)
    if type(descriptor).__name__ != "member_descriptor" or not isinstance(cls, type):
        raise TypeError(f"{getattr(cls, '__name__', cls)}.{name} is not a slot")
    if not issubclass(cls, descriptor.__objclass__):
        raise TypeError(f"{cls.__name__}.{name} is not a slot of its own or of a base")
    return (<PyMemberDescrObject*><PyObject*>descriptor).d_member.offset


def _exact_offsets(cls, names):
    """The offsets of ``names``, which must be exactly the slots ``cls`` declares (on ``object``)."""
    if not isinstance(cls, type) or tuple(cls.__dict__.get("__slots__", ())) != names:
        raise TypeError(f"{getattr(cls, '__name__', cls)!r}'s slots are not the ones the native core uses")
    if cls.__base__ is not object:
        raise TypeError(f"{cls.__name__} must derive from object alone")
    return [_offset(cls, name) for name in names]


def bind_types(state, event, ctx, sum_, avg):
    """Bind the classes whose slots the loop step reads: ``LoopState``, ``Event``, ``HostContext``,
    and the ``Sum`` and ``Avg`` aggregates (a ``TypeError`` when one lacks a slot it reads)."""
    global _state_type, _event_type, _ctx_type, _sum_type, _avg_type
    global S_HOT, S_COLD, S_LAST, S_TIME, S_NEXT_RID, S_SCHEDULED, E_TYPE, E_TIME, E_SEQ, E_KEY, E_FIELDS
    global C_TRACING, C_KEY, C_EMIT, C_NOW, C_KEYSTATE, C_PINDEX, C_BUDGET, C_SINK, A_TOTAL, A_N
    S_HOT, S_COLD, S_LAST = _offset(state, "hot"), _offset(state, "cold"), _offset(state, "last")
    S_TIME, S_NEXT_RID = _offset(state, "time"), _offset(state, "next_rid")
    S_SCHEDULED = _offset(state, "scheduled")
    E_TYPE, E_TIME, E_SEQ = _offset(event, "type"), _offset(event, "time"), _offset(event, "seq")
    E_KEY, E_FIELDS = _offset(event, "key"), _offset(event, "fields")
    C_TRACING, C_KEY, C_EMIT = _offset(ctx, "tracing"), _offset(ctx, "key"), _offset(ctx, "emit")
    C_NOW, C_KEYSTATE = _offset(ctx, "now"), _offset(ctx, "keystate")
    C_PINDEX, C_BUDGET, C_SINK = _offset(ctx, "pindex"), _offset(ctx, "budget"), _offset(ctx, "sink")
    A_TOTAL, A_N = _offset(sum_, "total"), _offset(sum_, "n")
    if not issubclass(avg, sum_) or _offset(avg, "total") != A_TOTAL or _offset(avg, "n") != A_N:
        raise TypeError("Avg must keep Sum's slots")
    _state_type, _event_type, _ctx_type, _sum_type, _avg_type = state, event, ctx, sum_, avg


def bind_key_state(cls):
    """Bind the host's ``KeyState`` (the loop reads its three dicts' slots)."""
    global _key_state_type, K_STATES, K_INSTANCES, K_TIMER_COUNTS
    K_STATES, K_INSTANCES = _offset(cls, "states"), _offset(cls, "instances")
    K_TIMER_COUNTS = _offset(cls, "timer_counts")
    _key_state_type = cls


cdef inline object _ks(object ks, Py_ssize_t offset, str name):
    """A ``KeyState`` slot: at its offset for an exact ``KeyState``, else by name."""
    if type(ks) is _key_state_type:
        return _read(ks, offset)
    return getattr(ks, name)


def bind_timers(sink_schedule):
    """Bind the engine's ``Timekeeping.schedule`` (the function the native ``schedule`` stands in
    for when a context's sink has it)."""
    global _sink_schedule
    _sink_schedule = sink_schedule


cdef object _new_instance(object ctx):
    """``HostContext.new_instance``'s twin (``ctx`` is exactly a bound ``HostContext``)."""
    cdef dict instances = <dict?>_ks(_read(ctx, C_KEYSTATE), K_INSTANCES, "instances")
    pindex = _read(ctx, C_PINDEX)
    n = instances.get(pindex)
    if n is None:  # why: no live counter: count on past every released key's ids
        n = _read(ctx, C_BUDGET).released.get(pindex, 0)
    n += 1
    instances[pindex] = n
    return n


cdef int _count_timer(object ctx) except -1:
    """The key counts one more timer of the context's pattern (``HostContext.schedule``'s count)."""
    cdef dict counts = <dict?>_ks(_read(ctx, C_KEYSTATE), K_TIMER_COUNTS, "timer_counts")
    pindex = _read(ctx, C_PINDEX)
    counts[pindex] = counts.get(pindex, 0) + 1
    return 0


cdef inline int _push_timer(list timers, object seq, object ctx, object time, object token) except -1:
    """``Timekeeping.schedule``'s push: the context's key and pattern get a timer at ``time``, numbered
    by the engine's counter ``seq``, on the engine's heap ``timers``."""
    timer = (time, next(seq), _read(ctx, C_KEY), _read(ctx, C_PINDEX), token)
    PyObject_GC_UnTrack(<PyObject*>timer)  # why: a time, numbers, a key and a token (see _new_run)
    _heap_push(timers, timer)
    return 0


cdef int _schedule(object ctx, object time, object token) except -1:
    """``HostContext.schedule``'s twin, and the engine's ``Timekeeping.schedule`` when the sink's
    is that one (``ctx`` is exactly a bound ``HostContext``)."""
    _count_timer(ctx)
    sink = _read(ctx, C_SINK)
    if _sink_schedule is not None and getattr(type(sink), "schedule", None) is _sink_schedule:
        _push_timer(sink._timers, sink._timer_seq, ctx, time, token)
    else:
        sink.schedule(time, _read(ctx, C_KEY), _read(ctx, C_PINDEX), token)
    return 0


cdef inline object _read(object obj, Py_ssize_t offset):
    """The slot at ``offset`` of ``obj`` (of a bound class: the caller checked its type)."""
    cdef PyObject* value = (<PyObject**>((<char*><PyObject*>obj) + offset))[0]
    if value == NULL:
        raise AttributeError(f"a {type(obj).__name__} has a slot that is not set")
    return <object>value


cdef inline void _write(object obj, Py_ssize_t offset, object value):
    """Replace the slot at ``offset`` of ``obj`` (of a bound class: the caller checked its type)."""
    cdef PyObject** slot = <PyObject**>((<char*><PyObject*>obj) + offset)
    cdef PyObject* old = slot[0]
    Py_INCREF(value)
    slot[0] = <PyObject*>value
    Py_XDECREF(old)


cdef inline bint _same_time(object a, object b) except -1:
    """``a == b``: two ints of 64 bits in C, anything else by Python's ``==``."""
    cdef long long x, y
    if type(a) is int and type(b) is int and _as_ll(<PyObject*>a, &x) and _as_ll(<PyObject*>b, &y):
        return x == y
    return a == b


cdef inline bint _same_text(object a, object b):
    """``a == b`` for two exact, ready strings: the same length, kind and bytes."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(a)
    if n != PyUnicode_GET_LENGTH(b) or PyUnicode_KIND(a) != PyUnicode_KIND(b) or not _text_ready(a):
        return False
    return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), n * PyUnicode_KIND(a)) == 0


cdef inline list _run_list():
    """A new list of a state's partial matches, not tracked by the cyclic collector.

    Why: it holds partial matches, which close no cycle (see _new_run), and it lives until the
    key's next event; untracked, freeing it does not unlink it from the collector's list (whose
    neighbours are long cold by then), and no collection walks it."""
    cdef list out = []
    PyObject_GC_UnTrack(<PyObject*>out)
    return out


cdef inline bint _none_in(object runs) except -1:
    """Whether a state's list of partial matches is empty (its length, for a list)."""
    if type(runs) is list:
        return PyList_GET_SIZE(runs) == 0
    return not runs


cdef inline bint _wakes_on(object types, object typ) except -1:
    """Whether an event of type ``typ`` can change what waits on ``types`` (``None``: any type)."""
    if types is None:
        return True
    if type(types) is frozenset:  # why: the set's own lookup, without the generic ``in``
        return PySet_Contains(types, typ)
    return typ in types


cdef inline bint _passed_by(object start, object window, object t, bint exact, long long limit) except -1:
    """``start + window <= t``: a window has passed. With ``exact``, ``limit`` is ``t - window``
    (``LoopStep._limit``) and an int ``start`` of 64 bits compares with it in C (for ints,
    ``start + window <= t`` exactly when ``start <= t - window``); else Python's arithmetic."""
    cdef long long s
    if exact and type(start) is int and _as_ll(<PyObject*>start, &s):
        return s <= limit
    return start + window <= t


# ------------------------------------------------------------- conditions over a partial match
# The loop condition, when it reads aggregates, as a tree of nodes: the twin of the inlined source
# nfa/loopgen.py writes for it (Emitter.gen / Emitter.expr), value for value, NULL (None) rule for
# NULL rule. Event-only parts are probes, computed once per event by the step's ``probe(e)``. A node
# that raises makes the step ask the interpreted condition, as the inlined source's ``except`` does.

cdef class Node:
    """One node of a condition over a partial match: ``value(probes, aggs)``."""

    cdef object value(self, tuple probes, tuple aggs):
        raise NotImplementedError

    cdef bint number(self, tuple probes, tuple aggs, double* out) except -1:
        """Store the value in ``out`` and return True when it is a float that is not NaN (or an int
        a double holds exactly), computed without an object; False when ``value`` must say."""
        return False


cdef long long _EXACT = 9007199254740992  # 2**53: every int up to it is exactly a double


cdef inline bint _exact_double(object v, double* out):
    """``v`` as a double, when it is a float that is not NaN or an int of at most 53 bits."""
    cdef long long i
    if type(v) is float:
        out[0] = PyFloat_AS_DOUBLE(v)
        return out[0] == out[0]
    if type(v) is int and _as_ll(<PyObject*>v, &i) and -_EXACT <= i <= _EXACT:
        out[0] = <double>i  # why: exact, so it compares with a float as Python compares them
        return True
    return False


cdef class Constant(Node):
    """A literal, or ``True``/``False``."""

    cdef object constant
    cdef bint is_number
    cdef double as_double

    def __init__(self, constant):
        self.constant = constant
        self.is_number = _exact_double(constant, &self.as_double)

    cdef object value(self, tuple probes, tuple aggs):
        return self.constant

    cdef bint number(self, tuple probes, tuple aggs, double* out) except -1:
        out[0] = self.as_double
        return self.is_number


cdef class Probe(Node):
    """An event-only value, computed once per event (its index among the probes)."""

    cdef Py_ssize_t index

    def __init__(self, Py_ssize_t index):
        self.index = index

    cdef object value(self, tuple probes, tuple aggs):
        return probes[self.index]

    cdef bint number(self, tuple probes, tuple aggs, double* out) except -1:
        return _exact_double(probes[self.index], out)


cdef class Both(Node):
    """Python's ``left and right`` (the value of one of them)."""

    cdef Node left, right

    def __init__(self, Node left, Node right):
        self.left, self.right = left, right

    cdef object value(self, tuple probes, tuple aggs):
        first = self.left.value(probes, aggs)
        return self.right.value(probes, aggs) if first else first


cdef class Either(Node):
    """Python's ``left or right``."""

    cdef Node left, right

    def __init__(self, Node left, Node right):
        self.left, self.right = left, right

    cdef object value(self, tuple probes, tuple aggs):
        first = self.left.value(probes, aggs)
        return first if first else self.right.value(probes, aggs)


cdef class Negation(Node):
    """Python's ``not inner``."""

    cdef Node inner

    def __init__(self, Node inner):
        self.inner = inner

    cdef object value(self, tuple probes, tuple aggs):
        return not self.inner.value(probes, aggs)


cdef inline object _compared(double x, double y, int op):
    """``x OP y`` as Python compares two floats that are not NaN."""
    cdef bint r
    if op == Py_LT:
        r = x < y
    elif op == Py_LE:
        r = x <= y
    elif op == Py_EQ:
        r = x == y
    elif op == Py_NE:
        r = x != y
    elif op == Py_GT:
        r = x > y
    else:
        r = x >= y
    return True if r else False


cdef class Compare(Node):
    """``left OP right`` with Python's operator (``op``: a rich comparison code), NULL if either is."""

    cdef Node left, right
    cdef int op

    def __init__(self, int op, Node left, Node right):
        self.op, self.left, self.right = op, left, right

    cdef object value(self, tuple probes, tuple aggs):
        cdef double x, y
        if self.left.number(probes, aggs, &x) and self.right.number(probes, aggs, &y):
            return _compared(x, y, self.op)  # why: two plain numbers compare as doubles, no objects
        a = self.left.value(probes, aggs)
        if a is None:
            return None
        b = self.right.value(probes, aggs)
        if b is None:
            return None
        return PyObject_RichCompare(a, b, self.op)


cdef class Arithmetic(Node):
    """``function(left, right)`` (the evaluator's own operator function), NULL if either is."""

    cdef Node left, right
    cdef object function

    def __init__(self, function, Node left, Node right):
        self.function, self.left, self.right = function, left, right

    cdef object value(self, tuple probes, tuple aggs):
        a = self.left.value(probes, aggs)
        if a is None:
            return None
        b = self.right.value(probes, aggs)
        if b is None:
            return None
        return self.function(a, b)


cdef class Unary(Node):
    """``not x``, ``-x`` or ``+x``; NULL stays NULL."""

    cdef Node operand
    cdef str op

    def __init__(self, str op, Node operand):
        if op not in ("not", "-", "+"):
            raise ValueError(f"no native unary {op!r}")
        self.op, self.operand = op, operand

    cdef object value(self, tuple probes, tuple aggs):
        a = self.operand.value(probes, aggs)
        if a is None:
            return None
        if self.op == "not":
            return not a
        return -a if self.op == "-" else +a


cdef class IsNull(Node):
    """``x is None`` (``negated``: ``x is not None``)."""

    cdef Node operand
    cdef bint negated

    def __init__(self, Node operand, bint negated):
        self.operand, self.negated = operand, negated

    cdef object value(self, tuple probes, tuple aggs):
        v = self.operand.value(probes, aggs)
        return (v is not None) if self.negated else (v is None)


cdef enum Reads:  # how an aggregate is read (the inlined source's forms)
    READS_AVG_WITH = 0
    READS_GET_WITH = 1
    READS_VALUE_WITH = 2
    READS_GET = 3
AVG_WITH, GET_WITH, VALUE_WITH, GET = READS_AVG_WITH, READS_GET_WITH, READS_VALUE_WITH, READS_GET  # for Python


cdef class Aggregate(Node):
    """The value of aggregate ``index`` of the partial match, cleaned as a name reads: ``get()``, or
    with the event's input ``probe`` added tentatively (``how``: ``AVG_WITH`` inline, else
    ``get_with`` or ``value_with``)."""

    cdef Py_ssize_t index, probe
    cdef int how
    cdef object value_with, clean

    def __init__(self, Py_ssize_t index, int how, Py_ssize_t probe, value_with, clean):
        self.index, self.how, self.probe = index, how, probe
        self.value_with, self.clean = value_with, clean

    cdef object value(self, tuple probes, tuple aggs):
        cdef long long count
        cdef int overflow = 0
        a = aggs[self.index]
        if self.how == READS_GET:
            v = a.get()
        else:
            x = probes[self.probe]
            if self.how == READS_AVG_WITH:
                if x is None:
                    v = a.get()
                elif type(a) is _avg_type:  # why: Avg.get_with inline, its slots read directly
                    total, n = _read(a, A_TOTAL), _read(a, A_N)
                    count = -1
                    if type(total) is float and type(x) is float and type(n) is int:
                        count = PyLong_AsLongLongAndOverflow(n, &overflow)
                    if 0 <= count < _EXACT and not overflow:
                        # why: the same IEEE sum and quotient as Python's, without two objects
                        v = (PyFloat_AS_DOUBLE(total) + PyFloat_AS_DOUBLE(x)) / <double>(count + 1)
                    else:
                        v = (total + x) / (n + 1)
                else:
                    v = (a.total + x) / (a.n + 1)
            elif self.how == READS_GET_WITH:
                v = a.get_with(x)
            else:
                v = self.value_with(a, x)
        if type(v) is float and v == v:  # why: a float that is not NaN is its own clean value
            return v
        return self.clean(v)

    cdef bint number(self, tuple probes, tuple aggs, double* out) except -1:
        cdef long long count
        cdef int overflow = 0
        if self.how != READS_AVG_WITH:
            return False
        x = probes[self.probe]
        a = aggs[self.index]
        if type(x) is not float or type(a) is not _avg_type:
            return False
        total, n = _read(a, A_TOTAL), _read(a, A_N)
        if type(total) is not float or type(n) is not int:
            return False
        count = PyLong_AsLongLongAndOverflow(n, &overflow)
        if overflow or not 0 <= count < _EXACT:
            return False
        # why: value()'s own IEEE sum and quotient; a NaN is left to value() to clean
        out[0] = (PyFloat_AS_DOUBLE(total) + PyFloat_AS_DOUBLE(x)) / <double>(count + 1)
        return out[0] == out[0]



# ------------------------------------------------------------------- what an event reads, once
# The step's event-only values (its probes), natively: the twins of the expressions nfa/loopgen.py's
# emitter writes into ``probe(e)``, evaluated in the same order; one that raises sends the event to
# the interpreter, as the Python probe function's raise does.

cdef class Read:
    """One probe: a value read from the event (``done``: the probes before it)."""

    cdef object read(self, object e, tuple done):
        raise NotImplementedError


cdef class TypeTest(Read):
    """``e.type == t`` (one type) or ``e.type in types``."""

    cdef object one
    cdef frozenset many

    def __init__(self, types):
        types = frozenset(types)
        if len(types) == 1:
            self.one, self.many = next(iter(types)), None
        else:
            self.one, self.many = None, types

    cdef object read(self, object e, tuple done):
        return self.test(_read(e, E_TYPE) if type(e) is _event_type else e.type)

    cdef object test(self, object typ):
        """Whether an event of type ``typ`` passes."""
        if self.many is None:  # why RichCompareBool: an identical string is equal without a compare
            return True if PyObject_RichCompareBool(typ, self.one, Py_EQ) else False
        return typ in self.many

    cdef frozenset names(self):
        """The types that pass."""
        return frozenset((self.one,)) if self.many is None else self.many


cdef class FieldRead(Read):
    """``e.fields.get(name)``, cleaned as a condition reads it (NaN and NULL-likes are ``None``)."""

    cdef object name, clean

    def __init__(self, name, clean):
        self.name, self.clean = name, clean

    cdef object read(self, object e, tuple done):
        fields = _read(e, E_FIELDS) if type(e) is _event_type else e.fields
        # why the test: a dict's own get, without looking the method up
        v = (<dict>fields).get(self.name) if type(fields) is dict else fields.get(self.name)
        if type(v) is float and v == v:  # why: a float that is not NaN is its own clean value
            return v
        return self.clean(v)


cdef class CallRead(Read):
    """``function(e)``, or ``function(e, argument)`` (an event-only condition, an attribute read)."""

    cdef object function, argument
    cdef bint with_argument

    def __init__(self, function, *argument):
        self.function = function
        self.with_argument = len(argument) == 1
        self.argument = argument[0] if argument else None

    cdef object read(self, object e, tuple done):
        return self.function(e, self.argument) if self.with_argument else self.function(e)


cdef class EventRead(Read):
    """The event itself (the input of an aggregate over whole events)."""

    cdef object read(self, object e, tuple done):
        return e


cdef class Combined(Read):
    """A condition over earlier probes (``and``, ``or``, ``not``, constants)."""

    cdef Node node

    def __init__(self, Node node):
        self.node = node

    cdef object read(self, object e, tuple done):
        return self.node.value(done, ())


class NotPlain(Exception):
    """An aggregate input that is no plain number: the event goes to the interpreter."""


cdef class Condition:
    """The loop condition of a partial match: ``took(run, e, probes)`` natively, asking the
    interpreted condition (``fallback(run, e)``) when a node raises."""

    cdef Node root
    cdef object fallback

    def __init__(self, Node root, fallback):
        self.root, self.fallback = root, fallback

    cdef object took(self, object run, object e, tuple probes):
        try:
            aggs = _get(run, AGGS)
            if type(aggs) is not tuple:
                raise TypeError("a partial match's aggregates are not a tuple")
            return self.root.value(probes, <tuple>aggs)
        except Exception:  # the interpreted condition decides and records the error
            return self.fallback(run, e)


cdef tuple _fresh_copies(tuple protos):
    """A new partial match's aggregates: a copy of each empty prototype (``Sum``/``Avg`` natively,
    slot for slot as their ``copy()``; any other by its own ``copy()``)."""
    cdef Py_ssize_t i, n = len(protos)
    cdef tuple out = PyTuple_New(n)
    cdef PyObject* a
    cdef bint plain = True
    for i in range(n):
        p = protos[i]
        if type(p) is _avg_type or type(p) is _sum_type:
            a = PyType_GenericAlloc(type(p), 0)
            _store(a, A_TOTAL, _read(p, A_TOTAL))
            _store(a, A_N, _read(p, A_N))
            copy = <object>a
            Py_DECREF(copy)  # why: the allocation's reference (the local holds its own)
            PyObject_GC_UnTrack(a)  # why: two numbers (see _new_run)
        else:
            copy = p.copy()
            plain = False
        Py_INCREF(copy)
        PyTuple_SET_ITEM(out, i, copy)
    if plain:
        PyObject_GC_UnTrack(<PyObject*>out)
    return out


cdef class Waking:
    """What an event of one type can change in a loop step's state: whether it can start a partial
    match, wake those waiting for a loop event (``cold``) or for the last stage (``last``), and, by
    code, each partial match (``by_code``); and what each of the step's type tests says of it
    (``typed``). One lookup per event, where each test was a set's or a string comparison."""

    cdef readonly bint starts, cold, last
    cdef readonly tuple by_code
    #: per probe of the step: a type test's value for this type, or None (the probe reads the event)
    cdef readonly tuple typed

    def __init__(self, bint starts, bint cold, bint last, tuple by_code, tuple typed=()):
        self.starts, self.cold, self.last, self.by_code = starts, cold, last, by_code
        self.typed = typed


cdef class LoopStep:
    """The loop plan's ``process(state, e, ctx)``: the generated step of ``nfa/loopgen.py``, native.

    It steps the same ``LoopState`` with the same ``LoopRun`` objects in exactly the same way (run
    ids, instances, timers, detections, cap). What depends on the pattern's conditions comes from
    Python functions generated from their IR (``nfa/loopnative.py``): ``probe(e)`` once per event,
    ``took(run, e, probes)`` per partial match when the loop condition reads aggregates,
    ``start(e)`` and ``fresh(e)`` for a new partial match.
    """

    cdef object interp, window, name, chan, wdef, probe, took, start, fresh
    cdef dict wt
    cdef object ctake, last_stage, n, capfn, cap, timer, detect, by_start, report
    cdef object python, python_advance
    cdef list reads
    cdef Py_ssize_t lp_index, took_index
    cdef tuple input_index, guard_index, protos, in_order
    cdef object start_wakes, cold_wakes, last_wakes
    cdef dict wakings  # event type -> its Waking, for every type a wake set or ``wt`` names
    cdef tuple few, few_wakings  # the same, as two tuples, when they are a few strings (else None)
    cdef Waking other  # the Waking of every other type
    cdef Condition condition
    cdef bint windowed, capped, last_aggs, took_per_run, emit_timeouts, native_detect, int_window
    cdef long long window_ll
    cdef tuple updates
    cdef Read start_read
    #: while the native loop runs: the engine's ``emit`` and the list it appends to (see LoopFeed)
    cdef object sink_emit
    cdef list sink_list
    cdef list chan_seen  # the channels of a match, by its length (``chan[n]``, kept once read)
    #: while the native loop runs: the engine (the context's sink), its timer heap and sequence
    cdef object sink_engine, sink_seq
    cdef list sink_timers

    def __init__(self, *, interp, window, name, chan, wt, wdef, probe, took, start, fresh,
                 ctake, last_stage, n, capfn, cap, timer, detect, by_start, start_wakes,
                 cold_wakes, last_wakes, last_aggs, updates, emit_timeouts, report, python,
                 python_advance, reads=None, lp_index=0, took_index=-1, input_index=(), guard_index=(),
                 protos=None, start_read=None):
        if _loop_run is None or _state_type is None:
            raise RuntimeError("bind_loop_run() and bind_types() were not called")
        self.interp, self.window, self.name = interp, window, name
        self.chan, self.wt, self.wdef, self.probe, self.took = chan, wt, wdef, probe, took
        self.start, self.fresh, self.ctake, self.last_stage, self.n = start, fresh, ctake, last_stage, n
        self.capfn, self.cap, self.timer, self.detect = capfn, cap, timer, detect
        self.by_start = by_start
        self.start_wakes, self.cold_wakes, self.last_wakes = start_wakes, cold_wakes, last_wakes
        self.windowed = window is not None
        cdef int overflow = 1
        if type(window) is int:
            self.window_ll = PyLong_AsLongLongAndOverflow(window, &overflow)
        self.int_window = not overflow
        self.capped = cap is not None
        self.last_aggs = bool(last_aggs)
        self.took_per_run = took is not None
        self.condition = took if isinstance(took, Condition) else None
        self.updates = tuple(updates)
        self.emit_timeouts = bool(emit_timeouts)
        self.native_detect = detect is new_match  # why: then the builder is called in C directly
        self.report = report
        self.python, self.python_advance = python, python_advance
        self.reads = None if reads is None else list(reads)
        if self.reads is not None and not all(isinstance(r, Read) for r in self.reads):
            raise TypeError("reads must be Read objects")
        self.lp_index, self.took_index = lp_index, took_index
        self.input_index, self.guard_index = tuple(input_index), tuple(guard_index)
        self.protos = None if protos is None else tuple(protos)
        self.in_order = tuple(range(len(self.updates)))
        self.start_read = start_read
        self.sink_emit, self.sink_list = None, None
        self.chan_seen = []
        self.sink_engine, self.sink_seq, self.sink_timers = None, None, None
        named = set(wt)
        for types in (start_wakes, cold_wakes, last_wakes):
            named.update(types or ())
        for r in self.reads or ():
            if isinstance(r, TypeTest):
                named.update((<TypeTest>r).names())
        self.wakings = {typ: self._wakes_of(typ) for typ in named}
        few = [typ for typ in self.wakings if type(typ) is str and _text_ready(typ)]
        if len(few) == len(self.wakings) and len(few) <= 8:
            self.few, self.few_wakings = tuple(few), tuple(self.wakings[typ] for typ in few)
        else:
            self.few, self.few_wakings = None, None
        # why False: a type that no test names fails every type test
        typed = tuple(False if isinstance(r, TypeTest) else None for r in self.reads or ())
        self.other = Waking(start_wakes is None, cold_wakes is None, last_wakes is None, wdef, typed)

    def _wakes_of(self, typ):
        """The :class:`Waking` of event type ``typ``, from the wake sets."""
        typed = tuple((<TypeTest>r).test(typ) if isinstance(r, TypeTest) else None for r in self.reads or ())
        return Waking(_wakes_on(self.start_wakes, typ), _wakes_on(self.cold_wakes, typ),
                      _wakes_on(self.last_wakes, typ), self.wt.get(typ, self.wdef), typed)

    cdef inline int _own_timers(self, object engine) except -1:
        """Push timers onto ``engine``'s heap, numbered by its counter, while the native loop runs
        (taken again after a callback: an image replaces the counter)."""
        self.sink_engine, self.sink_seq, self.sink_timers = engine, engine._timer_seq, engine._timers
        return 0

    cdef inline Waking _waking(self, object typ):
        """The :class:`Waking` of event type ``typ`` (``other`` for a type no set names)."""
        cdef Py_ssize_t i
        if self.few is not None and type(typ) is str and _text_ready(typ):
            # why: a few names compare by length and bytes faster than a fresh string hashes
            for i in range(PyTuple_GET_SIZE(self.few)):
                name = <object>PyTuple_GET_ITEM(self.few, i)
                if name is typ or _same_text(name, typ):
                    return <Waking>PyTuple_GET_ITEM(self.few_wakings, i)
            return self.other
        w = self.wakings.get(typ)
        return self.other if w is None else <Waking>w

    def waking(self, typ):
        """The :class:`Waking` of event type ``typ``."""
        return self._waking(typ)

    cdef inline bint _limit(self, object t, long long* limit):
        """Store ``t - window`` in ``limit`` when the window and ``t`` are ints of 64 bits and so is
        the difference (then ``_passed_by`` compares in C)."""
        cdef long long now
        if not self.int_window or type(t) is not int or not _as_ll(<PyObject*>t, &now):
            return False
        return not __builtin_ssubll_overflow(now, self.window_ll, limit)

    cdef tuple _probes(self, object e, Waking waking):
        """Every probe of the event, in order (a type test's value from the type's ``waking``); then
        the guards (an input that is no plain number).

        One tuple, filled in order: a probe over earlier ones reads them from it (the slots after
        the one being read are still empty, and an error frees the tuple as it is)."""
        cdef Py_ssize_t i, j, n = len(self.reads)
        cdef tuple done = PyTuple_New(n)
        cdef tuple typed = waking.typed
        cdef Read r
        if PyTuple_GET_SIZE(typed) != n:
            raise ValueError("a Waking made for another step")
        for i in range(n):
            value = <object>PyTuple_GET_ITEM(typed, i)
            if value is None:  # why: not a type test: read the event
                r = <Read>self.reads[i]
                value = r.read(e, done)
            Py_INCREF(value)
            PyTuple_SET_ITEM(done, i, value)
        for j in self.guard_index:
            x = done[j]
            if not (x is None or type(x) is float or type(x) is int):
                raise NotPlain(x)
        return done

    cdef int _advance(self, object state, object t, object ctx) except -1:
        """``LoopPlan.advance``'s twin: the key's time moves to ``t``; partial matches whose window
        passed go (``report(expired, ctx)`` times them out or traces them when anything reads them)."""
        cdef list runs, expired = []
        cdef Py_ssize_t k, n
        cdef bint report, exact
        cdef long long limit = 0
        if type(state) is not _state_type or type(ctx) is not _ctx_type:
            self.python_advance(state, t, ctx)  # why: objects of other classes: the Python twin
            return 0
        now = _read(state, S_TIME)
        if now is None or t > now:
            _write(state, S_TIME, t)
        if not self.windowed:
            return 0
        window = self.window
        report = self.emit_timeouts or _read(ctx, C_TRACING)  # why: else nothing reads the expired
        exact = self._limit(t, &limit)
        for runs in (_read(state, S_HOT), _read(state, S_COLD), _read(state, S_LAST)):
            k = 0
            n = len(runs)
            while k < n and _passed_by(_get(runs[k], START_TS), window, t, exact, limit):
                k += 1
            if k:
                if report:
                    expired.extend(runs[:k])
                del runs[:k]
        if expired:
            expired.sort(key=self.by_start)
            self.report(expired, ctx)
        return 0

    cdef object _match(self, object key, object inst, object t, tuple events):
        """The detection of a match of ``events`` (its channels by its length)."""
        cdef Py_ssize_t n = PyTuple_GET_SIZE(events)
        cdef list seen = self.chan_seen
        if n < PyList_GET_SIZE(seen) and <object>PyList_GET_ITEM(seen, n) is not None:
            channels = <object>PyList_GET_ITEM(seen, n)  # why: a match of this length had them
        else:
            channels = self.chan[n]
            while PyList_GET_SIZE(seen) <= n:
                seen.append(None)
            seen[n] = channels
        if self.native_detect:
            return _build_match(self.name, key, inst, "match", t, events, channels)
        return self.detect(self.name, key, inst, "match", t, events, channels)

    def advance(self, state, t, ctx):
        """``LoopPlan.advance(state, t, ctx)``, natively."""
        self._advance(state, t, ctx)

    def on_timer(self, state, t, token, ctx):
        """``LoopPlan.on_timer(state, t, token, ctx)``: a window deadline passed with no event."""
        self._advance(state, t, ctx)

    cdef inline int _fresh(self, object state, object run, object ctx) except -1:
        """Ask for a timer at the window deadline of the new partial match ``run``."""
        if not self.windowed:
            return 0
        start_ts = _get(run, START_TS)
        if _same_time(_get(run, PREV_TS), start_ts):
            deadline = start_ts + self.window
            if _read(state, S_SCHEDULED) != deadline:
                _write(state, S_SCHEDULED, deadline)
                if self.sink_timers is not None and _read(ctx, C_SINK) is self.sink_engine:
                    _count_timer(ctx)  # why: the loop's engine: its heap without looking it up
                    _push_timer(self.sink_timers, self.sink_seq, ctx, deadline, self.timer)
                else:
                    _schedule(ctx, deadline, self.timer)
        return 0

    cdef inline int _update(self, object run, tuple values, tuple index) except -1:
        """The loop stage's aggregates of ``run`` take the event (loopgen's ``_update``): the ``j``-th
        takes ``values[index[j]]``."""
        cdef Py_ssize_t j, at
        cdef long kind
        cdef tuple spec
        if not self.updates:
            return 0
        ra = _get(run, AGGS)
        for j in range(PyTuple_GET_SIZE(self.updates)):
            spec = <tuple>self.updates[j]
            x = values[<Py_ssize_t>index[j]]
            at = spec[0]
            kind = spec[1]
            if kind == TAKES_SUM_OR_AVG:
                if x is not None:
                    a = ra[at]
                    if type(a) is _avg_type or type(a) is _sum_type:  # why: Sum.update, its slots directly
                        _write(a, A_TOTAL, _read(a, A_TOTAL) + x)
                        _write(a, A_N, _read(a, A_N) + 1)
                    else:
                        a.total += x
                        a.n += 1
            elif kind == TAKES_COUNT:
                if x is not None:
                    ra[at].n += 1
            else:
                ra[at].update(x)
        return 0

    def __call__(self, state, e, ctx):
        return self._process(state, e, ctx)

    cdef object _process(self, object state, object e, object ctx, Waking waking=None):
        """The step (``__call__``), for the native loop's own calls (``waking``: the event type's,
        when the caller looked it up)."""
        if type(state) is not _state_type or type(e) is not _event_type or type(ctx) is not _ctx_type:
            return self.python(state, e, ctx)  # why: objects of other classes: the Python twin
        if _read(ctx, C_TRACING):
            return self.interp(state, e, ctx)
        t = _read(e, E_TIME)
        cdef list hot = _read(state, S_HOT), cold = _read(state, S_COLD), last = _read(state, S_LAST)
        window = self.window
        cdef long long limit = 0
        cdef bint exact = self.windowed and self._limit(t, &limit)
        if self.windowed and (
            (hot and _passed_by(_get(hot[0], START_TS), window, t, exact, limit))
            or (cold and _passed_by(_get(cold[0], START_TS), window, t, exact, limit))
            or (last and _passed_by(_get(last[0], START_TS), window, t, exact, limit))
        ):
            self._advance(state, t, ctx)  # why: some partial match's window has passed
            hot, cold, last = _read(state, S_HOT), _read(state, S_COLD), _read(state, S_LAST)
        else:
            now = _read(state, S_TIME)
            if now is None or t > now:
                _write(state, S_TIME, t)
        if waking is None:
            waking = self._waking(_read(e, E_TYPE))
        cdef bint starts = waking.starts
        cdef bint vc = bool(cold) and waking.cold
        cdef bint vl = bool(last) and waking.last
        if not hot and not vc and not vl and not starts:
            return  # why: no partial match can change and the event cannot start one
        cdef tuple inputs, probes, at
        cdef bint lp
        if self.reads is not None:
            try:
                probes = self._probes(e, waking)
            except Exception:  # why: an event-only condition raised: the interpreter records it
                return self.interp(state, e, ctx)
            lp = probes[self.lp_index]
            took_all = probes[self.took_index] if self.took_index >= 0 else None
            inputs, at = probes, self.input_index
        else:
            try:
                probed = self.probe(e)
            except Exception:  # why: an event-only condition raised: the interpreter records it
                return self.interp(state, e, ctx)
            lp = probed[0]
            took_all = probed[1]
            inputs = probed[2]
            probes = probed[3]
            at = self.in_order
        cdef list runs
        # why the keys: a start event starts one partial match, so the loop's (hot and cold) have
        # distinct start ids and sort by them alone; those waiting for the last stage share them.
        # Each list is sorted and every key is distinct, so inserting one list's partial matches
        # into another gives the order of the Python step's sort
        if vc:
            if hot:
                runs = cold + hot  # why this way round: distinct keys, and hot is the shorter
                _settle(runs, len(cold), False)
            else:
                runs = cold
            if vl:  # why: the loop's, now sorted, by start id and run id with the waits
                runs = last + runs
                _settle(runs, len(last), True)
        elif vl and hot:
            runs = last + hot  # why this way round: distinct (start id, run id) keys
            _settle(runs, len(last), True)
        elif vl:
            runs = last
        else:
            runs = hot
        cdef list nh = _run_list()
        cdef list nc = _run_list() if vc else cold
        cdef list nl = _run_list() if vl else last
        cdef Py_ssize_t nc0 = len(nc), nl0 = len(nl), i, sorted_to
        cdef list done = None  # why None: most events complete nothing (made at the first match)
        cdef tuple wk = waking.by_code
        cdef long long rid = _read(state, S_NEXT_RID), r0
        cdef long code
        cdef bint took, cs = False
        cdef tuple taken, ev
        key = _read(ctx, C_KEY)
        name, chan, detect = self.name, self.chan, self.detect
        try:
            if runs is last and lp and not self.last_aggs:
                # why: only the waits for the last stage are visited and the event completes every one
                rid += len(runs)
                done = []
                for run in runs:
                    ev = _plus(_get(run, EVENTS), e)
                    done.append(self._match(key, _get(run, INST), t, ev))
                runs = []
            for i in range(len(runs)):
                run = runs[i]
                code = _get(run, CODE)
                if code == -2:
                    if lp:
                        rid += 1
                        if self.last_aggs:
                            self.ctake((), self.last_stage, e)
                        ev = _plus(_get(run, EVENTS), e)
                        if done is None:
                            done = []
                        done.append(self._match(key, _get(run, INST), t, ev))
                    else:
                        nl.append(run)
                    continue
                if not wk[code]:  # why: the type cannot change it
                    (nh if code == 0 else nc).append(run)
                    continue
                if self.condition is not None:
                    took = self.condition.took(run, e, probes)
                elif self.took_per_run:
                    took = self.took(run, e, probes)
                else:
                    took = took_all
                if code == 0:  # why: in the loop both branches live (take or skip; leave the loop)
                    r0 = rid
                    rid += 2
                    taken = _get(run, EVENTS)
                    prev = _get(run, PREV_TS)
                    if took:
                        _set(run, RID, r0)
                        _set(run, PREV_TS, t)
                        self._update(run, inputs, at)
                        _set(run, EVENTS, _plus(taken, e))
                        nh.append(run)
                    else:
                        _set(run, RID, r0)
                        _set(run, CODE, -1)
                        nc.append(run)
                    self._fresh(state, run, ctx)
                    if lp:
                        if self.last_aggs:
                            self.ctake((), self.last_stage, e)
                        ev = _plus(taken, e)
                        if done is None:
                            done = []
                        done.append(self._match(key, _get(run, INST), t, ev))
                    else:
                        w = _new_run(
                            _get(run, START_ID), r0 + 1, -2, _get(run, START_TS), prev, _get(run, INST), taken, ()
                        )
                        nl.append(w)
                        self._fresh(state, w, ctx)
                elif took:  # why: entry states and the gap move one step towards the loop
                    _set(run, RID, rid)
                    rid += 1
                    _set(run, CODE, 0 if code <= 1 else code - 1)
                    _set(run, PREV_TS, t)
                    self._update(run, inputs, at)
                    _set(run, EVENTS, _plus(_get(run, EVENTS), e))
                    (nh if code <= 1 else nc).append(run)
                    self._fresh(state, run, ctx)
                else:
                    nc.append(run)
            # why: successors are appended in visiting order, so nh is sorted, and so is nc when cold
            # was visited; else nc is the old sorted cold plus sorted successors: compare at the seam
            cs = (not vc and nc0 and len(nc) != nc0
                  and _order(_get(nc[nc0 - 1], START_ID), _get(nc[nc0], START_ID)) > 0)
            sorted_to = len(nc) if vc else nc0  # why: nc[:sorted_to] is in order (see above)
            if starts and (self.start(e) if self.start_read is None else self.start_read.read(e, ())):
                inst = _new_instance(ctx)
                r0 = rid
                rid += 1
                aggs = self.fresh(e) if self.protos is None else _fresh_copies(self.protos)
                sid = (t, _read(e, E_SEQ))
                first = (e,)
                PyObject_GC_UnTrack(<PyObject*>sid)  # why: numbers and a frozen event (see _new_run)
                PyObject_GC_UnTrack(<PyObject*>first)
                run = _new_run(sid, r0, self.n, t, t, inst, first, aggs)
                if nc and not cs and _order(_get(nc[len(nc) - 1], START_ID), _get(run, START_ID)) > 0:
                    cs = True
                nc.append(run)
                self._fresh(state, run, ctx)
        finally:
            _write(state, S_NEXT_RID, rid)
        if cs:
            _settle(nc, sorted_to, False)
        # why: see loopgen's template (the waits' order); the old waits nl[:nl0] are in order
        if vl and not lp:
            nl.sort(key=self.by_start)
        elif nl0 and len(nl) != nl0 and _order(_get(nl[nl0 - 1], START_ID), _get(nl[nl0], START_ID)) > 0:
            _settle(nl, nl0, False)
        _write(state, S_HOT, nh)
        _write(state, S_COLD, nc)
        _write(state, S_LAST, nl)
        if done is not None:
            emit = _read(ctx, C_EMIT)
            if emit is self.sink_emit:  # why: the engine's own emit appends to the list the loop gave
                self.sink_list.extend(done)
            else:
                for d in done:
                    emit(d)
        if self.capped and len(nh) + len(nc) + len(nl) > self.cap:
            self.capfn(state, ctx, self.cap)


# --------------------------------------------------------------------------- the engine's loop
cdef inline bint _boxed(object pos, long long* cpos) except -1:
    """Whether the position ``pos`` must stay a Python int; else it is stored in ``cpos`` (an int
    below 2**62, so that counting on never overflows)."""
    return not (type(pos) is int and _as_ll(<PyObject*>pos, cpos) and 0 <= cpos[0] < (1LL << 62))


cdef inline bint _due(list timers, object t) except -1:
    """Whether the first timer of the heap is before ``t`` (two ints compared in C)."""
    first = timers[0]
    cdef int c
    if type(first) is tuple and PyTuple_GET_SIZE(first) > 0:
        c = _item_lt(PyTuple_GET_ITEM(first, 0), <PyObject*>t)
        if c >= 0:
            return c == 1
    return first[0] < t


cdef inline tuple _parts(object e, object event_type):
    """``(e.time, e.key, e.type)``: the slots directly for an exact ``Event``."""
    if type(e) is event_type:
        return _read(e, E_TIME), _read(e, E_KEY), _read(e, E_TYPE)
    return e.time, e.key, e.type


cdef class LoopFeed:
    """The engine's fused loop (``fused.py``'s ``loop(engine, it, out)``) for an engine whose one
    pattern runs a native :class:`LoopStep`: the same stamping, clock, due timers, key table,
    routing, step, idle release and delivery, in the same order, for the same results.

    ``fused.build_loop`` builds it only for that case (one matcher, no measures, no tracing); its
    pure-Python twin is the generated loop, which the engine runs everywhere else.
    """

    cdef LoopStep step
    cdef object name, new_state, is_idle, on_timer, stamp, sync, key_state, detection, event
    cdef object deliver, outputs_emit
    cdef bint step_timer
    cdef dict used  # each type of ``union`` -> the step's Waking (None: every type is used)

    def __init__(self, *, step, name, union, new_state, is_idle, on_timer, stamp, sync, key_state,
                 detection, event, deliver, outputs_emit=None):
        if _state_type is None:
            raise RuntimeError("bind_types() was not called")
        self.step, self.name, self.new_state = step, name, new_state
        self.is_idle = is_idle
        self.on_timer, self.stamp, self.sync, self.key_state = on_timer, stamp, sync, key_state
        self.detection, self.event, self.deliver = detection, event, deliver
        self.outputs_emit = outputs_emit
        self.step_timer = on_timer == step.on_timer  # why: then the step's expiry is called in C
        self.used = None if union is None else {typ: step.waking(typ) for typ in union}

    cdef bint _wakes(self, object st, Waking waking, object t) except -1:
        """The kernel's guard: whether the step can change the key's state, or only moves its clock."""
        cdef LoopStep step = self.step
        cdef list cold, last
        cdef long long limit = 0
        if not _none_in(_read(st, S_HOT)):
            return True
        cold = _read(st, S_COLD)
        last = _read(st, S_LAST)
        cdef bint exact = step.windowed and bool(cold or last) and step._limit(t, &limit)
        if cold and (waking.cold or (
                step.windowed and _passed_by(_get(cold[0], START_TS), step.window, t, exact, limit))):
            return True
        if last and (waking.last or (
                step.windowed and _passed_by(_get(last[0], START_TS), step.window, t, exact, limit))):
            return True
        return waking.starts

    cdef bint _idle(self, object st) except -1:
        """The kernel's idle test: no partial match left."""
        return _none_in(_read(st, S_HOT)) and _none_in(_read(st, S_COLD)) and _none_in(_read(st, S_LAST))

    def __call__(self, engine, it, out):
        clock = engine.event_clock
        cdef list pending = engine._pending
        cdef dict keys = engine._keys
        cdef list timers = engine._timers
        host_fire = engine.host.fire
        ctx = engine.host.context
        if type(ctx) is not _ctx_type:
            raise TypeError("the engine's context is not the bound HostContext")
        seen = clock.max_seen
        wm, closed = clock.watermark
        lo = wm if wm > seen else seen
        closed_at = wm if closed and wm >= seen else None
        pos = clock.next_seq
        # why a C counter: a position is a new int object per event; the object is made only when
        # one is read (stamping, a late event, writing the clock back). ``boxed``: it does not fit
        cdef long long cpos = 0
        cdef bint boxed = _boxed(pos, &cpos)
        ctx.pindex = 0
        ctx.pattern = self.name
        event_type, step = self.event, self.step
        cdef dict states, counts
        cdef dict used = self.used
        cdef int c
        cdef bint synced
        cdef Waking waking
        # why: while this loop runs, the step hands its detections straight to the pending list when
        # the context's emit is the engine's own (which appends them there), without a call each
        emit = _read(ctx, C_EMIT)
        saved = step.sink_emit, step.sink_list, step.sink_engine, step.sink_seq, step.sink_timers
        if (self.outputs_emit is not None and PyMethod_Check(emit)
                and <object>PyMethod_GET_FUNCTION(emit) is self.outputs_emit
                and <object>PyMethod_GET_SELF(emit) is engine):
            step.sink_emit, step.sink_list = emit, pending
        # why: the step pushes its timers onto the engine's heap directly when the engine is the sink
        # and schedules as Timekeeping does (rebound after any callback: an image replaces them)
        cdef bint own_timers = (_read(ctx, C_SINK) is engine and _sink_schedule is not None
                                and getattr(type(engine), "schedule", None) is _sink_schedule)
        if own_timers:
            step._own_timers(engine)
        try:
            for e in it:
                if boxed:
                    p = pos
                    pos = p + 1
                else:
                    cpos += 1
                # why: a stamped event of the usual types needs no validation call (stamp() decides)
                if type(e) is not event_type or _read(e, E_SEQ) < 0:
                    e = self.stamp(e, p if boxed else cpos - 1)
                if type(e) is event_type:
                    t, key, typ = _read(e, E_TIME), _read(e, E_KEY), _read(e, E_TYPE)
                else:
                    t, key, typ = e.time, e.key, e.type
                # why t - t: a NaN or infinite float time (of an event stamped already) is checked too
                if not ((type(t) is int or (type(t) is float and t - t == 0))
                        and type(typ) is str
                        and (type(key) is str or type(key) is int or key is None)):
                    e = self.stamp(e, p if boxed else cpos - 1)
                    # why reread: stamping makes a numpy time a built-in number, a NaN key None
                    t, key, typ = _parts(e, event_type)
                c = _item_lt(<PyObject*>t, <PyObject*>lo)  # why: two ints compare in C (-1: by Python)
                if (t <= lo and (t < lo or t == closed_at)) if c < 0 else (
                        c == 1 or (c == 2 and t == closed_at)):
                    return e, (p if boxed else cpos - 1)  # why: late or out of order: the general path
                lo = seen = t
                if timers and _due(timers, t):  # why: timers before t are due (nothing is buffered)
                    synced = False  # why: the clock is written back only before something may read it
                    while timers and _due(timers, t):
                        tt, _, tkey, tp, token = _heap_pop(timers)
                        tks = keys.get(tkey)
                        if tks is None:
                            tks = keys[tkey] = self.key_state()
                        if tp == 0:
                            counts = <dict?>_ks(tks, K_TIMER_COUNTS, "timer_counts")
                            counts[0] -= 1
                            st = (<dict?>_ks(tks, K_STATES, "states")).get(0)
                            if st is None:
                                st = _ks(tks, K_STATES, "states")[0] = self.new_state(tkey)
                            _write(ctx, C_KEY, tkey)
                            _write(ctx, C_NOW, tt)
                            _write(ctx, C_KEYSTATE, tks)
                            # why: the step's own expiry reads no clock unless it reports (times out
                            # or traces) what expires; anything else may read it
                            if not synced and not (self.step_timer and type(st) is _state_type
                                                   and not step.emit_timeouts and not _read(ctx, C_TRACING)):
                                self.sync(clock, seen, pos if boxed else cpos)
                                synced = True
                            if self.step_timer:
                                step._advance(st, tt, ctx)
                            else:
                                self.on_timer(st, tt, token, ctx)
                            if self._idle_any(st) and not counts.get(0):
                                counts.pop(0, None)
                                del _ks(tks, K_STATES, "states")[0]
                                if ctx.forget:
                                    ctx.forget_instances(tks, 0)
                        else:
                            if not synced:
                                self.sync(clock, seen, pos if boxed else cpos)
                                synced = True
                            host_fire(tks, tkey, tt, tp, token)
                        if not (_ks(tks, K_STATES, "states") or _ks(tks, K_INSTANCES, "instances")
                                or _ks(tks, K_TIMER_COUNTS, "timer_counts")):
                            del keys[tkey]
                        if pending:  # why: the timer's transitions are complete: the engine delivers
                            if not synced:
                                self.sync(clock, seen, pos if boxed else cpos)
                                synced = True
                            engine._after(tt, out)
                            pos = clock.next_seq  # why: events fed back by a callback took positions
                            boxed = _boxed(pos, &cpos)
                            if own_timers:
                                step._own_timers(engine)
                if used is None:
                    waking = step._waking(typ)
                else:
                    w = used.get(typ)
                    if w is None:
                        continue  # why: events no pattern uses only move the clock
                    waking = <Waking>w
                ks = keys.get(key)
                if ks is None:
                    if not waking.starts:
                        continue  # why: no partial match to change and none to start
                    ks = keys[key] = self.key_state()
                states = _ks(ks, K_STATES, "states")
                st = states.get(0)
                if st is None and waking.starts:
                    st = states[0] = self.new_state(key)
                if st is not None:
                    if type(st) is not _state_type:
                        raise TypeError(f"a loop pattern's state is a {type(st).__name__!r}")
                    if self._wakes(st, waking, t):
                        _write(ctx, C_KEY, key)
                        _write(ctx, C_NOW, t)
                        _write(ctx, C_KEYSTATE, ks)
                        step._process(st, e, ctx, waking)
                    else:
                        _write(st, S_TIME, t)
                    if self._idle(st) and not (<dict?>_ks(ks, K_TIMER_COUNTS, "timer_counts")).get(0):
                        (<dict?>_ks(ks, K_TIMER_COUNTS, "timer_counts")).pop(0, None)
                        del states[0]
                        if ctx.forget:
                            ctx.forget_instances(ks, 0)
                if (not states and not _ks(ks, K_INSTANCES, "instances")
                        and not _ks(ks, K_TIMER_COUNTS, "timer_counts")):
                    del keys[key]
                if pending:  # why: the event's transitions are complete: the engine delivers
                    # why read here: only an event with outputs needs to know where they go
                    plain = (engine._on_detection is None and engine.derive is None
                             and type(engine).deliver is self.deliver)
                    for d in pending:
                        if not plain or type(d) is not self.detection or (
                            _read(d, _offsets[9]) if type(d) is _detection else d.extra
                        ):
                            break  # why: a callback, counter, fed event or other output: deliver() does it
                    else:  # why: only detections that are just collected (or not even that): deliver()'s work, inline
                        out += pending
                        if engine.collect:
                            engine.detections += pending
                        del pending[:]
                if pending:
                    self.sync(clock, seen, pos if boxed else cpos)
                    settled = engine._settle(out)
                    if own_timers:
                        step._own_timers(engine)
                    if settled:  # why: it processed events fed back: reread the clock
                        seen = clock.max_seen
                        wm, closed = clock.watermark
                        lo = wm if wm > seen else seen
                        closed_at = wm if closed and wm >= seen else None
                        pos = clock.next_seq
                        boxed = _boxed(pos, &cpos)
        finally:
            step.sink_emit, step.sink_list, step.sink_engine, step.sink_seq, step.sink_timers = saved
            self.sync(clock, seen, pos if boxed else cpos)
        return None

    cdef bint _idle_any(self, object st) except -1:
        """The matcher's ``is_idle`` for a timer's state (the kernel's test when it is a loop state)."""
        if type(st) is _state_type:
            return self._idle(st)
        return bool(self.is_idle(st))
