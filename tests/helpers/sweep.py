"""The size of a sweep (fuzzed cases, kill points): `make test` runs a sample of each, `make
test-all` (VAULTMEM_TEST_FULL=1) the full sweep. A sweep's own variable, when set, wins over
both. Tests that size themselves here carry the `sweep` mark (pyproject.toml)."""

from __future__ import annotations

import os

FULL = os.environ.get("VAULTMEM_TEST_FULL", "") not in ("", "0")


def sweep_size(variable: str, sampled: int, full: int) -> int:
    """`$variable` if set, else `full` under VAULTMEM_TEST_FULL=1, else `sampled`."""
    value = os.environ.get(variable)
    return int(value) if value else full if FULL else sampled
