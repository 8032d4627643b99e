"""Running a benchmark harness (benchmarks/*.py) as a user runs it, for the smoke tests of
tests/test_benchmarks.py and tests/test_perf_harness.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH = ROOT / "benchmarks"
# The evaluation data lies in shared/ beside the repo; VAULTMEM_SHARED_DATA names another
# place for it (a checkout elsewhere, e.g. a git worktree, still runs these smokes on it).
SHARED = Path(os.environ.get("VAULTMEM_SHARED_DATA") or ROOT.parent / "shared")
LOCOMO_DEV = SHARED / "eval" / "locomo" / "locomo-dev.json"

if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))   # the harnesses' own modules (locomo, perf_vault, ...)


def run_harness(*args, timeout=900):
    """Run `python ARGS...` from the repo: it must exit 0; (its last stdout line as JSON, stdout)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("VAULTMEM_VAULT", None)
    done = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    return json.loads(last), done.stdout
