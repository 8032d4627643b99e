"""The faked clock of a test module: VAULTMEM_NOW set, and no VAULTMEM_VAULT leaking in from
the shell that runs the tests (subprocesses inherit both)."""

from __future__ import annotations

from contextlib import contextmanager

import pytest


@contextmanager
def clock_at(now: str):
    """`VAULTMEM_NOW=now` until the block ends; yields the MonkeyPatch to move the clock on."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VAULTMEM_NOW", now)
        mp.delenv("VAULTMEM_VAULT", raising=False)
        yield mp
