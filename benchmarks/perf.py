"""vaultmem performance figures (SPEC §6), measured in one run on a generated vault.

    python benchmarks/perf.py --notes 10000 --json report.json
    python benchmarks/perf.py --quick            # a few hundred notes, short windows

Figures: index throughput against raw `model.encode` of the same chunk texts (a ratio, so
that machine speed cancels); in-process search p50/p95 at the vault's size and at 100k chunks
(synthetic rows with random unit vectors inserted through `vaultmem.index`); a cold
`vaultmem search` (no daemon) against a warm one answered by the daemon; edit-to-searchable
latency through the daemon; the no-change startup scan; the daemon's idle CPU and RSS.
A part whose command fails is reported as null with its reason under "skipped".
The last stdout line is one JSON object of the figures; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from perf_vault import generate_vault, queries, sentence  # noqa: E402

LARGE_CHUNKS = 100_000
# SPEC's goals, reported beside the figures: (figure, comparison, bound).
GOALS = [("index_vs_encode", ">=", 0.85), ("edit_to_searchable_p95_s", "<=", 1.0),
         ("warm_search_s", "<=", 0.25), ("warm_speedup", ">=", 30.0),
         ("search_p50_ms", "<=", 20.0), ("large_search_p50_ms", "<=", 60.0),
         ("nochange_scan_s", "<=", 1.0), ("daemon_idle_cpu_percent", "<=", 0.5)]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values, share: float) -> float:
    """Nearest-rank percentile (share in 0..1) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def vaultmem_command() -> list[str]:
    """The `vaultmem` console script beside this interpreter, else the same CLI through -c."""
    script = Path(sys.executable).with_name("vaultmem")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from vaultmem.cli import main; sys.exit(main())"]


def cli(root: Path, *args: str, timeout: float = 300.0, daemon: bool = True) -> tuple[float, dict | None]:
    """Run `vaultmem --vault ROOT ARGS...`: (wall seconds, parsed --json output)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("VAULTMEM_NO_DAEMON", None)
    if not daemon:
        env["VAULTMEM_NO_DAEMON"] = "1"
    started = time.perf_counter()
    done = subprocess.run([*vaultmem_command(), "--vault", str(root), *args], capture_output=True,
                          text=True, timeout=timeout, env=env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"`vaultmem {' '.join(args)}` exited {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-300:]}")
    return wall, (json.loads(done.stdout) if "--json" in args else None)


def open_memory(root: Path, embedder=None):
    from vaultmem.api import Memory

    return Memory(root, embedder=embedder)  # the warm model of this run, loaded once


def chunk_texts(memory) -> list[str]:
    """The texts the indexer embeds for this vault: every chunk's `search_text`."""
    from vaultmem.chunking import chunk_note, read_for_index

    texts = []
    for item in memory.vault.iter_notes():
        path = Path(getattr(item, "path", item))
        note = read_for_index(path.read_bytes(), path)
        texts.extend(c.search_text for c in chunk_note(note, memory.vault.rel(path)))
    return texts


def measure_index(root: Path, embedder, batch_size: int) -> dict:
    """A full reindex against raw encode of the same texts, run before and after it (averaged,
    so that a machine getting busier or quieter during the run cancels out)."""
    from vaultmem.ingest import EMBED_BATCH_CHUNKS

    def raw_encode(texts):
        # Called in the indexer's slices: one model.encode over all texts measured 1.6x
        # slower here than the same texts in slices of 512, which would flatter the ratio.
        started = time.perf_counter()
        for start in range(0, len(texts), EMBED_BATCH_CHUNKS):
            embedder.encode(texts[start:start + EMBED_BATCH_CHUNKS], batch_size=batch_size)
        return time.perf_counter() - started

    memory = open_memory(root, embedder)
    texts = chunk_texts(memory)
    before = raw_encode(texts)
    started = time.perf_counter()
    report = memory.reindex(full=True)
    index_s = time.perf_counter() - started
    raw_s = (before + raw_encode(texts)) / 2
    if report["chunks"] != len(texts):
        raise RuntimeError(f"the index embedded {report['chunks']} chunks, raw encode {len(texts)}")
    notes = report["added"] + report["updated"]
    return {"chunks": report["chunks"], "index_s": index_s, "encode_s": raw_s,
            "index_notes_per_s": notes / index_s, "encode_notes_per_s": notes / raw_s,
            "index_vs_encode": raw_s / index_s}


def measure_search(memory, texts: list[str], prefix: str) -> dict:
    """p50/p95 in milliseconds of `memory.search(q, k=10)` after three warm-up queries."""
    for text in texts[:3]:
        memory.search(text, k=10)
    times = []
    for text in texts:
        started = time.perf_counter()
        memory.search(text, k=10)
        times.append(1000 * (time.perf_counter() - started))
    return {f"{prefix}_p50_ms": percentile(times, 0.5), f"{prefix}_p95_ms": percentile(times, 0.95)}


def measure_nochange_scan(root: Path, runs: int = 3) -> dict:
    """A fresh process-like start (new Memory, no model) reconciling an unchanged vault."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        report = open_memory(root).reindex()
        times.append(time.perf_counter() - started)
        if report["added"] or report["updated"] or report["removed"]:
            raise RuntimeError(f"the no-change scan found changes: {report}")
    return {"nochange_scan_s": times[0], "nochange_scan_median_s": percentile(times, 0.5)}


def measure_cold_cli(root: Path, texts: list[str]) -> dict:
    walls = [cli(root, "search", text, "--json", daemon=False)[0] for text in texts]
    return {"cold_search_s": percentile(walls, 0.5)}


def measure_warm_cli(root: Path, texts: list[str], cold_s: float | None) -> dict:
    cli(root, "search", texts[0], "--json")  # the daemon's first query warms its caches
    walls = [cli(root, "search", text, "--json")[0] for text in texts]
    warm = percentile(walls, 0.5)
    return {"warm_search_s": warm, "warm_search_p95_s": percentile(walls, 0.95),
            "warm_speedup": (cold_s / warm) if cold_s else None}


def measure_daemon_start(root: Path, daemon: dict) -> dict:
    """`vaultmem daemon start` (returns once the daemon answers); its pid goes in `daemon`."""
    wall, result = cli(root, "daemon", "start", "--json")
    daemon["pid"] = int(result["pid"])
    return {"daemon_start_s": wall}


def measure_edits(root: Path, edits: int, deadline_s: float = 30.0) -> dict:
    """Append a unique word to a note; poll the daemon's search until the note is a hit."""
    import random

    from vaultmem.client import request

    notes = sorted((root / "Memory" / "Facts").glob("*.md"))
    rng = random.Random(3)
    latencies = []
    for number, path in enumerate(rng.sample(notes, min(edits, len(notes)))):
        word = f"zqv{number}k{rng.randrange(10**6)}x"
        rel = path.relative_to(root).as_posix()
        with path.open("a", encoding="utf-8") as out:
            out.write(f"\nIts codeword is {word}.\n")
        written = time.perf_counter()
        while True:
            hits = request(root, "search", {"query": word, "k": 5})["hits"]
            if any(h["path"] == rel for h in hits):
                latencies.append(time.perf_counter() - written)
                break
            if time.perf_counter() - written > deadline_s:
                raise RuntimeError(f"an edit to {rel} was not searchable after {deadline_s:.0f} s")
            time.sleep(0.01)
    return {"edit_to_searchable_p50_s": percentile(latencies, 0.5),
            "edit_to_searchable_p95_s": percentile(latencies, 0.95), "edits": len(latencies)}


def cpu_ticks(pid: int) -> int:
    # /proc/<pid>/stat fields 14 and 15 (utime, stime), counted after the ")" of the name.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def measure_idle(pid: int, seconds: float) -> dict:
    """The daemon's CPU over an idle window (% of one core) and its resident memory."""
    time.sleep(min(5.0, seconds))  # let the last edit's batch settle
    ticks, started = cpu_ticks(pid), time.perf_counter()
    time.sleep(seconds)
    used = (cpu_ticks(pid) - ticks) / os.sysconf("SC_CLK_TCK")
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    return {"daemon_idle_cpu_percent": 100 * used / (time.perf_counter() - started),
            "daemon_rss_mb": rss_kb / 1024, "idle_seconds": seconds}


def insert_synthetic_chunks(root: Path, target: int, dim: int, batch: int = 10_000) -> int:
    """Top the index up to `target` rows with random unit vectors and generated texts."""
    import random

    import numpy as np

    from vaultmem.index import ChunkIndex

    index = ChunkIndex(root)
    missing = target - index.count()
    rng, vectors_rng = random.Random(11), np.random.default_rng(11)
    types = ["fact", "preference", "event", "procedure"]
    for start in range(0, max(0, missing), batch):
        size = min(batch, missing - start)
        vectors = vectors_rng.standard_normal((size, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = []
        for i, vector in enumerate(vectors):
            number = start + i
            note_type = types[number % len(types)]
            text = sentence(rng, note_type)
            rows.append({"chunk_id": f"synthetic-{number // 2}#{number % 2}",
                         "note_id": f"synthetic-{number // 2}",
                         "path": f"Memory/Facts/Synthetic {number // 2}.md",
                         "title": f"Synthetic {number // 2}", "type": note_type,
                         "status": "active", "user": "default", "tags": f"|vaultmem/{note_type}|",
                         "entities": "", "created": "2025-06-01T10:00:00",
                         "updated": "2025-06-01T10:00:00", "valid_from": "", "valid_to": "",
                         "importance": 0.5, "content_hash": "", "source_messages": [],
                         "sources": [], "text": text, "search_text": text, "keywords": "",
                         "vector": vector})
        index.replace([], rows)
    index.maintain(force=True)
    return index.count()


class Run:
    """Figures of one run, and the reason of each part that could not be measured."""

    def __init__(self):
        self.figures: dict = {}
        self.skipped: dict[str, str] = {}

    def part(self, name: str, measure, *args):
        log(f"perf: {name} ...")
        started = time.perf_counter()
        try:
            result = measure(*args)
        except (RuntimeError, OSError, subprocess.SubprocessError, ImportError, ValueError) as exc:
            self.skipped[name] = f"{type(exc).__name__}: {exc}"
            log(f"perf: {name} skipped: {self.skipped[name]}")
            return None
        except Exception as exc:  # vaultmem's own errors (e.g. DaemonError) land here
            if type(exc).__module__.startswith("vaultmem"):
                self.skipped[name] = f"{type(exc).__name__}: {exc}"
                log(f"perf: {name} skipped: {self.skipped[name]}")
                return None
            raise
        self.figures.update(result)
        log(f"perf: {name} done in {time.perf_counter() - started:.1f} s")
        return result


def goals(figures: dict) -> dict:
    met = {}
    for name, op, bound in GOALS:
        value = figures.get(name)
        met[name] = None if value is None else (value >= bound if op == ">=" else value <= bound)
    return met


def print_summary(figures: dict, skipped: dict, met: dict) -> None:
    print(f"{'figure':<28} {'value':>12}  goal")
    bounds = {name: f"{op} {bound}" for name, op, bound in GOALS}
    for name, value in figures.items():
        shown = f"{value:12.3f}" if isinstance(value, float) else f"{value!s:>12}"
        mark = {True: "met", False: "MISSED", None: ""}[met.get(name)]
        print(f"{name:<28} {shown}  {bounds.get(name, '')} {mark}".rstrip())
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, help="memory notes to generate (default 10000)")
    parser.add_argument("--quick", action="store_true", help="200 notes, few queries and edits")
    parser.add_argument("--queries", type=int, help="timed in-process queries (default 200)")
    parser.add_argument("--edits", type=int, help="edits timed through the daemon (default 20)")
    parser.add_argument("--cold-runs", type=int, help="cold CLI searches (default 3)")
    parser.add_argument("--warm-runs", type=int, help="CLI searches answered by the daemon (default 20)")
    parser.add_argument("--idle-seconds", type=float, help="idle CPU window (default 60)")
    parser.add_argument("--large-chunks", type=int, help=f"size of the large index (default {LARGE_CHUNKS})")
    parser.add_argument("--json", dest="json_out", type=Path, help="write the full report here")
    args = parser.parse_args(argv)
    quick = {"notes": 200, "queries": 10, "edits": 3, "cold_runs": 1, "warm_runs": 5,
             "idle_seconds": 5.0, "large_chunks": 2000}
    full = {"notes": 10_000, "queries": 200, "edits": 20, "cold_runs": 3, "warm_runs": 20,
            "idle_seconds": 60.0, "large_chunks": LARGE_CHUNKS}
    for key, default in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, default)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    from vaultmem.api import init
    from vaultmem.embed import BATCH_SIZE, Embedder

    run = Run()
    texts = queries(args.queries)
    with tempfile.TemporaryDirectory(prefix="vaultmem-perf-") as tmp:
        root = Path(tmp) / "vault"
        log(f"perf: generating {args.notes} notes in {root}")
        run.figures.update(notes=args.notes, **{k: v for k, v in generate_vault(root, args.notes).items()
                                                if k == "session_notes"})
        init(root)
        embedder = Embedder()
        import torch

        # Context for reading the latencies: a busy machine and torch's thread count
        # (2 OpenMP threads on a 2-core machine with other work ran queries 60x slower here).
        run.figures.update(torch_threads=torch.get_num_threads(), load_average_start=os.getloadavg()[0])
        embedder.encode(texts[:8])  # load and warm the model before anything is timed
        run.part("index", measure_index, root, embedder, BATCH_SIZE)
        run.part("search", measure_search, open_memory(root, embedder), texts, "search")
        run.part("no-change scan", measure_nochange_scan, root)
        cold = run.part("cold search", measure_cold_cli, root, texts[:args.cold_runs])
        try:
            daemon = {}
            if run.part("daemon start", measure_daemon_start, root, daemon):
                run.part("warm search", measure_warm_cli, root, queries(args.warm_runs, seed=8),
                         (cold or {}).get("cold_search_s"))
                run.part("edit to searchable", measure_edits, root, args.edits)
                run.part("idle", measure_idle, daemon["pid"], args.idle_seconds)
        finally:  # also after a start that timed out: never leave a daemon behind
            run.part("daemon stop", lambda: cli(root, "daemon", "stop", "--json") and {})
        large = run.part("large index", lambda: {"large_chunks": insert_synthetic_chunks(
            root, args.large_chunks, embedder.dim), "large_vectors": "synthetic random unit vectors"})
        if large:
            run.part("large search", measure_search, open_memory(root, embedder), texts, "large_search")
    run.figures["load_average_end"] = os.getloadavg()[0]
    met = goals(run.figures)
    print_summary(run.figures, run.skipped, met)
    figures = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in run.figures.items()}
    figures["skipped"] = run.skipped
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps({"figures": figures, "goals_met": met,
                                             "goals": [list(g) for g in GOALS], "args": vars(args)},
                                            indent=2, default=str) + "\n", encoding="utf-8")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
