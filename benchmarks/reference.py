"""Reference match counts and checksums (Flink CEP 2.3.0) and the workload files' digests.

Copied from the shared ``REFERENCE_COUNTS.md`` so that tests and ``benchmarks.run`` can check
results without it. Rows: first 20k rows, the 200k file, the 1M file (all seed 1, defaults).
"""

from __future__ import annotations

__all__ = ["PATTERNS", "PEERS", "REFERENCE", "SHA256"]

PATTERNS = ("P1", "P2", "P2any", "P3", "P3any", "P4", "P4any", "P5")

# pattern -> {rows: (matches, checksum)}
REFERENCE: dict[str, dict[int, tuple[int, int]]] = {
    "P1": {20_000: (212, 118316374), 200_000: (1_818, 326839980), 1_000_000: (8_754, 112707054)},
    "P2": {20_000: (528, 52732632), 200_000: (5_108, 303766572), 1_000_000: (26_225, 931308966)},
    "P2any": {20_000: (2_013, 423604824), 200_000: (20_233, 741294039), 1_000_000: (103_895, 110890115)},
    "P3": {20_000: (1_152, 47589854), 200_000: (11_983, 578968146), 1_000_000: (59_753, 661362171)},
    "P3any": {20_000: (5_091, 423386141), 200_000: (49_026, 514722962), 1_000_000: (238_880, 693283597)},
    "P4": {20_000: (878, 724369482), 200_000: (8_537, 702708034), 1_000_000: (42_340, 243509944)},
    "P4any": {20_000: (1_139, 652031382), 200_000: (11_157, 509405059), 1_000_000: (55_661, 112148303)},
    "P5": {20_000: (4_227, 546778778), 200_000: (63_456, 464321501), 1_000_000: (327_511, 401916961)},
}

SHA256 = {
    200_000: "269fc6de1e327e738a7e36eeea6eaca39a487669f696421b11cf0dd03cd8db63",
    1_000_000: "e9ea01cf2506301f659b0dbdbf1256c17f960bf0397c0026209af63cc2572071",
}

# events/s on w200k.csv on the project's standard machine (2 cores), from REFERENCE_COUNTS.md:
# pattern -> (Flink CEP bare NFA single thread, Flink DataStream job p=1, OpenCEP or None)
PEERS: dict[str, tuple[int, int, int | None]] = {
    "P1": (1_310_000, 73_000, 117_000),
    "P2": (503_000, 136_000, None),
    "P2any": (308_000, 122_000, 59_000),
    "P3": (224_000, 123_000, None),
    "P3any": (56_000, 49_000, 7_600),
    "P4": (700_000, 156_000, 66_000),
    "P4any": (540_000, 162_000, 73_000),
    "P5": (62_000, 63_000, None),
}
