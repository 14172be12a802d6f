"""The demo layer above the engine: the Prova blog examples and Prova-style printing.

``python -m workbench.demo`` (``make demo``) runs the four examples of the Prova blog post and
prints what their continuations and exit reactions print (:mod:`.cli`). :mod:`.examples` holds the
groups, the client's messages and the blog's lines; :mod:`.format` prints reactions and detections
the way Prova prints them. The engine never imports this package.

>>> from workbench.demo import EXAMPLES, run_example
>>> run_example(EXAMPLES["or_stop"])[-1]
'Update user2 30.30.30.30'
"""

from __future__ import annotations

from workbench.demo.cli import main
from workbench.demo.examples import EXAMPLES, SCHEMA, BlogExample, run_example, run_example_records

__all__ = ["EXAMPLES", "SCHEMA", "BlogExample", "main", "run_example", "run_example_records"]
