"""The first index of a big vault of a person's own notes (issue 36): `vaultmem reindex`
stopped partway with Ctrl-C (SIGINT) and run again, as a person would, against one run
straight through being the sum of the two.

    python benchmarks/first_index.py --user-notes 50000 --stop-after 600 --json out.json

Figures: the notes and chunks, the seconds of each run (wall, from its start, the model's
load and the vault's reading included) and of both, the chunks the second run embedded
(the rest, not all), chunks per second, each run's peak RSS, and the last progress line the
first run printed (what a person sees: chunks embedded, the rate, the time left).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

from perf_runtime import child_env, cli_measured, vaultmem_command  # noqa: E402
from perf_vault import generate_user_notes  # noqa: E402


def stopped_run(root: Path, after: float) -> dict:
    """`vaultmem reindex` interrupted with SIGINT `after` seconds in: its wall time, exit
    status and last progress line."""
    started = time.perf_counter()
    # SIGINT as a terminal delivers it: a shell's background job starts with it ignored.
    child = subprocess.Popen([*vaultmem_command(), "--vault", str(root), "reindex"], env=child_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        child.wait(timeout=after)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=600)
    lines = [line for line in err.splitlines() if line.startswith("embedding")]
    return {"first_run_s": time.perf_counter() - started, "first_run_exit": child.returncode,
            "first_run_progress": lines[-1] if lines else None,
            "first_run_said": (err.strip().splitlines() or [""])[-1]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--user-notes", type=int, default=50_000)
    parser.add_argument("--model", help="the vault's embedding model (default: the bundled one)")
    parser.add_argument("--stop-after", type=float, default=0.0,
                        help="seconds into the first run to send SIGINT (0: run straight through)")
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vaultmem-first-index-") as tmp:
        root = Path(tmp) / "vault"
        generated = generate_user_notes(root, args.user_notes)
        init = [*vaultmem_command(), "init", str(root)] + (["--model", args.model] if args.model else [])
        subprocess.run(init, env=child_env(), check=True, capture_output=True, timeout=600)
        figures = {"user_notes": args.user_notes, "words_mean": generated["user_note_words"] / args.user_notes,
                   "model": args.model or "all-MiniLM-L6-v2", "cores": os.cpu_count(),
                   "load_average_start": os.getloadavg()[0]}
        if args.stop_after:
            figures.update(stopped_run(root, args.stop_after))
        done, report = cli_measured(root, "reindex", "--json", timeout=6 * 3600, daemon=False)
        figures.update(second_run_s=done.wall_s, second_run_peak_rss_mb=done.peak_rss_mb,
                       second_run_chunks=report["chunks"], second_run_unchanged=report["unchanged"],
                       second_run_added=report["added"], second_run_rebuilt=report["rebuilt"])
        from vaultmem.index.table import ChunkIndex

        chunks = ChunkIndex(root).count()
        total_s = figures.get("first_run_s", 0.0) + done.wall_s
        figures.update(chunks=chunks, total_s=total_s, total_min=total_s / 60, chunks_per_s=chunks / total_s,
                       load_average_end=os.getloadavg()[0])
    print(json.dumps(figures, indent=2))
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
