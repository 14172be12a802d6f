"""``--order-by``: the fields that order equal-time events of a replay (Flink's ``EventComparator``).

The engine takes the fields (:func:`~workbench.engine.clock.tie_order`); here the text of the
``%cep run`` / ``workbench run`` option is read and each field is checked against the input.

>>> order_fields("price, volume")
('price', 'volume')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from workbench.errors import CepError
from workbench.language.conditions import nearest

__all__ = ["ORDER_BY_HELP", "check_order_by", "order_fields"]

ORDER_BY_HELP = "order equal-time events by these fields, ascending, missing last (default: arrival order)"

#: names that read the event itself rather than a field
_OWN = frozenset({"type", "key"})


def order_fields(order_by: str | Sequence[str] | None) -> tuple[str, ...]:
    """The field names of ``order_by`` (``"a,b"``, or a list); empty names are an error.

    >>> order_fields(None), order_fields(["a"])
    ((), ('a',))
    """
    if order_by is None:
        return ()
    parts = order_by.split(",") if isinstance(order_by, str) else list(order_by)
    names = tuple(str(p).strip() for p in parts)
    if not names or not all(names):
        msg = f"--order-by {order_by!r}: give field names separated by commas (FIELD[,FIELD])"
        raise CepError(msg)
    return names


def check_order_by(names: Sequence[str], fields: Iterable[str], backend: str = "local") -> None:
    """Raise :class:`CepError` naming the first of ``names`` that the input has no field for
    (or for any ``names`` on a backend other than ``local``, which takes no ``order_by``).

    >>> check_order_by(["price"], ["volume"])
    Traceback (most recent call last):
    ...
    workbench.errors.CepError: --order-by: the events have no field 'price'; fields: volume
    """
    if not names:
        return
    if backend != "local":
        msg = f"--order-by runs on the local backend only, not on {backend!r}"
        raise CepError(msg)
    have = set(fields)
    for name in names:
        if name not in have and name not in _OWN:
            known = sorted(have)
            msg = (
                f"--order-by: the events have no field {name!r}{nearest(name, known)}; "
                f"fields: {', '.join(known) or 'none'}"
            )
            raise CepError(msg)
