"""Functions that conditions may call, registered by name from Python.

Pattern text never runs arbitrary Python: a condition can only call the built-in functions
(``len``, ``sum``, ``abs``, ...) and those registered with
:func:`workbench.engine.expr.register_function`, re-exported here. Every pattern family compiles its
condition strings with :func:`workbench.engine.expr.compile_expr`, so a registered function is
callable from sequences, reaction groups and receives alike; a condition that calls an unknown
function is reported when the pattern is defined.

>>> register_function("spread_doc", lambda hi, lo: hi - lo, replace=True)
>>> from workbench.engine.expr import compile_expr
>>> compile_expr("spread_doc(3, 1) == 2")({})
True
>>> unregister_function("spread_doc")
"""

from __future__ import annotations

from workbench.engine.expr import register_function, registered_functions, unregister_function

__all__ = ["register_function", "registered_functions", "unregister_function"]
