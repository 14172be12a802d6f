"""Prova reaction groups: the pattern objects, their matcher and helpers.

>>> from workbench.engine.reactions import ReactionGroup, Channel, Initiator, Var
"""

from __future__ import annotations

from workbench.engine.reactions import patterns
from workbench.engine.reactions.patterns import *  # noqa: F403  (the package's face is the patterns module's)

__all__: list[str] = []
__all__ += patterns.__all__
