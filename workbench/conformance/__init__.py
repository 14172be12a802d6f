"""Conformance runner: neutral JSON cases (Prova, Flink CEP) run through the workbench engine."""

from workbench.conformance.runner import CaseResult, RunOptions, main, run_case

__all__ = ["CaseResult", "RunOptions", "main", "run_case"]
