"""The workload generator, the checksum and the brute-force oracle against the shared references."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.checksum import MODULUS, Checksum, g, match_hash, splitmix64
from benchmarks.reference import PATTERNS, REFERENCE, SHA256
from benchmarks.workload import WorkloadSpec, format_row, iter_rows, write_csv
from tests.benchmarks.oracle import matches

SHARED_GENERATOR = Path(__file__).resolve().parents[3] / "shared" / "bench" / "gen_workload.py"


def csv_text(spec: WorkloadSpec) -> str:
    buf = io.StringIO()
    write_csv(spec, buf)
    return buf.getvalue()


def test_default_workload_is_the_reference_file() -> None:
    digest = hashlib.sha256(csv_text(WorkloadSpec(n=200_000)).encode()).hexdigest()
    assert digest == SHA256[200_000]


def test_prefix_stable() -> None:
    short = list(iter_rows(WorkloadSpec(n=500, keys=7, skew=0.8)))
    longer = list(iter_rows(WorkloadSpec(n=900, keys=7, skew=0.8)))
    assert longer[:500] == short


def test_rows_carry_the_parsed_price() -> None:
    for row in iter_rows(WorkloadSpec(n=2_000)):
        fields = format_row(row).rstrip("\n").split(",")
        assert float(fields[3]) == row.price
        assert int(fields[0]) == row.t


@pytest.mark.skipif(not SHARED_GENERATOR.exists(), reason="../shared/bench/gen_workload.py not present")
@pytest.mark.parametrize(
    ("spec", "args"),
    [
        (WorkloadSpec(n=3_000), []),
        (
            WorkloadSpec(
                n=4_000,
                keys=37,
                seed=9,
                noise=0.3,
                mix=(("trade", 1.0), ("logout", 2.0)),
                mean_gap_ms=3.5,
                skew=1.1,
            ),
            [
                "--keys=37",
                "--seed=9",
                "--noise=0.3",
                "--mix=trade=1,logout=2",
                "--mean-gap-ms=3.5",
                "--skew=1.1",
            ],
        ),
        (WorkloadSpec(n=2_000, mean_gap_ms=1.0, keys=3), ["--mean-gap-ms=1", "--keys=3"]),
    ],
)
def test_byte_identical_to_shared_generator(spec: WorkloadSpec, args: list[str]) -> None:
    ref = subprocess.run(
        [sys.executable, str(SHARED_GENERATOR), f"--n={spec.n}", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert csv_text(spec) == ref


def test_spec_validation() -> None:
    with pytest.raises(ValueError, match="mean_gap_ms"):
        WorkloadSpec(mean_gap_ms=0.5)
    with pytest.raises(ValueError, match="mix"):
        WorkloadSpec(mix=(("buy", 1.0),))


def test_checksum_definition() -> None:
    # splitmix64 reference values (public test vectors of the SplitMix64 generator seeded with 0).
    assert splitmix64(0) == 0xE220A8397B1DCDAF
    assert g(0) == (0xE220A8397B1DCDAF >> 1) % MODULUS
    c = Checksum().add([5, 9]).add([2])
    assert c.matches == 2
    assert c.value == (match_hash([9, 5]) + g(2)) % MODULUS


@pytest.mark.parametrize("pattern", PATTERNS)
def test_oracle_reproduces_reference_on_20k(pattern: str) -> None:
    rows = list(iter_rows(WorkloadSpec(n=20_000)))
    c = Checksum()
    for m in matches(pattern, rows):
        c.add(m)
    assert (c.matches, c.value) == REFERENCE[pattern][20_000]
