"""CEP Workbench benchmarks: the PATTERNS.md workload, its eight patterns, and scaling measurements.

Run ``python -m benchmarks.run --help``; see ``benchmarks/README.md``.
"""
