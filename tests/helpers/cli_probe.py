"""Run one CLI command in a fresh Python process and report which heavy libraries it
imported: a command the daemon answers must load no model and no index itself."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "sentence_transformers", "lancedb")


def cli_imports(vault, *args, timeout: float = 60) -> tuple[subprocess.CompletedProcess, list[str]]:
    """(the finished process, the HEAVY modules it imported) for `vaultmem --vault VAULT ARGS`."""
    probe = ("import json, sys\n"
             "from vaultmem.cli import cli\n"
             "try:\n"
             "    cli(['--vault', *sys.argv[1:]])\n"
             "except SystemExit:\n"
             "    pass\n"
             f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(vault), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)
    return done, json.loads(done.stderr.strip().splitlines()[-1])
