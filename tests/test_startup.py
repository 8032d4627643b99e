"""`vaultmem --help` starts fast: heavy libraries are imported only where they are used.

Checked as imports, not timings (timings belong in benchmarks/): a fresh interpreter runs
the CLI's help and reports which heavy modules ended up in sys.modules.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "sentence_transformers", "lancedb", "git", "transformers", "mcp",
         "pyarrow", "numpy", "watchdog")

PROBE = """
import json, sys, time
start = time.perf_counter()
import vaultmem.cli
from vaultmem.cli import cli
try:
    cli.main(args=sys.argv[1:], prog_name="vaultmem", standalone_mode=True)
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy})
print(json.dumps({{"code": code, "heavy": heavy, "seconds": time.perf_counter() - start}}),
      file=sys.stderr)
"""


def run_probe(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("VAULTMEM_VAULT", None)
    proc = subprocess.run([sys.executable, "-c", PROBE.format(heavy=set(HEAVY)), *args],
                          capture_output=True, text=True, env=env, cwd=cwd or REPO, timeout=60)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return proc, report


def test_help_imports_no_heavy_library():
    proc, report = run_probe("--help")
    assert report["code"] == 0, proc.stderr
    assert "Usage: vaultmem" in proc.stdout
    assert report["heavy"] == []
    print(f"vaultmem --help: {report['seconds']:.3f} s")  # shown with -s; not asserted


def command_names():
    from vaultmem.cli import cli

    return sorted(cli.commands)


@pytest.mark.parametrize("command", command_names())
def test_each_commands_help_imports_no_heavy_library(command):
    proc, report = run_probe(command, "--help")
    assert report["code"] == 0, proc.stderr
    assert report["heavy"] == [], f"`vaultmem {command} --help` imported {report['heavy']}"


def test_list_and_show_do_not_load_the_model_or_the_index(tmp_path):
    """Reading notes is file work: no torch, no LanceDB (init needs git, nothing else)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", "from vaultmem.store.init import init_vault; import sys; "
                    "init_vault(sys.argv[1])", str(tmp_path)], check=True, env=env)
    note = tmp_path / "Memory" / "Facts" / "Tea.md"
    note.write_text("---\nid: A1\ntype: fact\ncreated: 2026-11-29T10:30:00\n"
                    "updated: 2026-11-29T10:30:00\nstatus: active\nuser: default\n---\nTea.\n")
    for args in (["list", "--json"], ["show", "Tea", "--json"]):
        proc, report = run_probe("--vault", str(tmp_path), *args)
        assert report["code"] == 0, proc.stderr
        assert not {m.split(".")[0] for m in report["heavy"]} & {"torch", "sentence_transformers",
                                                                   "lancedb", "transformers"}, args
