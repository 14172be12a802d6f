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

from cpython.object cimport PyObject
from cpython.ref cimport Py_DECREF, Py_INCREF


cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        Py_ssize_t offset
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    PyObject* PyType_GenericAlloc(object cls, Py_ssize_t nitems) except NULL


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
    if not isinstance(cls, type) or tuple(cls.__dict__.get("__slots__", ())) != _DETECTION_SLOTS:
        raise TypeError("Detection's slots are not the ones the native core stores")
    if cls.__base__ is not object:
        raise TypeError("Detection must derive from object alone")
    member = type(cls.__dict__["pattern"])
    for i, name in enumerate(_DETECTION_SLOTS):
        descriptor = cls.__dict__[name]
        if type(descriptor) is not member or type(descriptor).__name__ != "member_descriptor":
            raise TypeError(f"Detection.{name} is not a slot")
        _offsets[i] = (<PyMemberDescrObject*><PyObject*>descriptor).d_member.offset
    _detection = cls
    _no_measures = no_measures
    return new_match


def new_match(pattern, key, instance, kind, time, events, channels):
    """``Detection(pattern, key, instance, kind, time, events, channels)`` with the default optional
    fields (the twin of ``detection._new_match_python``)."""
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
    return out
