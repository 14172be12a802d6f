"""A faithful model of ``java.util.PriorityQueue`` order (for Flink-identical tie-breaking).

Flink keeps partial and completed matches in priority queues ordered only by the start event, and
iterates them in *heap-array order*; among equal keys the order that results from ``siftUp`` /
``siftDown`` / bulk removal decides which of several matches with the same first event is emitted
(and, under a skip strategy, which one survives). These functions reproduce Java's algorithms on a
Python list, with a key function; equal keys compare as equal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["offer", "poll", "remove_if"]

T = TypeVar("T")
"""An element of the heap."""
#: the sort key of an element (tuples compare element by element, as Java's comparators here do)
Key = Callable[[T], tuple[object, ...]]


def offer(heap: list[T], item: T, key: Key[T]) -> None:
    """``PriorityQueue.offer``: append and sift up (stops at an equal parent)."""
    heap.append(item)
    k = len(heap) - 1
    kx = key(item)
    while k > 0:
        parent = (k - 1) >> 1
        e = heap[parent]
        if kx >= key(e):
            break
        heap[k] = e
        k = parent
    heap[k] = item


def _sift_down(heap: list[T], k: int, item: T, n: int, key: Key[T]) -> None:
    kx = key(item)
    half = n >> 1
    while k < half:
        child = 2 * k + 1
        c = heap[child]
        right = child + 1
        if right < n and key(c) > key(heap[right]):
            child = right
            c = heap[child]
        if kx <= key(c):
            break
        heap[k] = c
        k = child
    heap[k] = item


def poll(heap: list[T], key: Key[T]) -> T:
    """``PriorityQueue.poll``: remove the root, move the last element to the root, sift down."""
    result = heap[0]
    last = heap.pop()
    if heap:
        _sift_down(heap, 0, last, len(heap), key)
    return result


def remove_if(heap: list[T], pred: Callable[[T], bool], key: Key[T]) -> list[T]:
    """``PriorityQueue.removeIf`` (Java 11+ bulk remove): compact survivors in order, then heapify."""
    removed = [x for x in heap if pred(x)]
    if not removed:
        return removed
    heap[:] = [x for x in heap if not pred(x)]
    n = len(heap)
    for i in range((n >> 1) - 1, -1, -1):
        _sift_down(heap, i, heap[i], n, key)
    return removed
