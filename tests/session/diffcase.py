"""One small diff case the front-end tests share: two thresholds of a pattern, three events."""

from __future__ import annotations

import pandas as pd

PATTERNS = """
sequence big
    partition by key
    begin o: order
    followed by p: payment where e.amount > last(o).amount
sequence bigger
    partition by key
    begin o: order
    followed by p: payment where e.amount > last(o).amount * 2
"""


def orders() -> pd.DataFrame:
    """An order of 10 and payments of 15 and 25: ``big`` fires on the first, ``bigger`` on the second."""
    return pd.DataFrame(
        [
            {"time": 0, "type": "order", "key": "anna", "amount": 10.0},
            {"time": 5, "type": "payment", "key": "anna", "amount": 15.0},
            {"time": 9, "type": "payment", "key": "anna", "amount": 25.0},
        ]
    )
