"""vaultmem performance figures (SPEC §6), measured in one run on a generated vault.

    python benchmarks/perf.py --notes 10000 --user-notes 10000 --json report.json
    python benchmarks/perf.py --quick            # a few hundred notes, short windows

The vault holds memory notes and, beside them, the person's own notes outside `Memory/`
(read-only to vaultmem). Figures: index throughput over all their chunks against raw
`model.encode` of the same chunk texts (a ratio, so that machine speed cancels); in-process
search p50/p95 for memory questions and for questions about the person's notes, at the
vault's size and at 100k chunks (synthetic rows with random unit vectors inserted through
`vaultmem.index`); a cold `vaultmem search` (no daemon) against a warm one answered by the
daemon; edit-to-searchable latency through the daemon, of memory notes and of the person's
notes; the no-change startup scan of both; the daemon's idle CPU and RSS.
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

from perf_vault import generate_user_notes, generate_vault, note_queries, queries, sentence  # noqa: E402

LARGE_CHUNKS = 100_000
# SPEC's goals, reported beside the figures: (figure, comparison, bound).
# The person's own notes get the goals of the memories.
GOALS = [("index_vs_encode", ">=", 0.85), ("edit_to_searchable_p95_s", "<=", 1.0),
         ("edit_user_note_to_searchable_p95_s", "<=", 1.0),
         ("warm_search_s", "<=", 0.25), ("warm_speedup", ">=", 30.0),
         ("search_p50_ms", "<=", 20.0), ("search_notes_p50_ms", "<=", 20.0),
         ("large_search_p50_ms", "<=", 60.0),
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
    """The texts the indexer embeds for this vault: every chunk's `search_text`, memory notes
    and the person's own notes, cut by the indexer's own `chunks_of`."""
    from vaultmem.ingest import chunks_of

    vault, texts = memory.vault, []
    for item in vault.iter_indexed():
        path = Path(getattr(item, "path", item))
        texts.extend(c.search_text for c in chunks_of(vault, vault.rel(path), path.read_bytes(), path))
    return texts


def user_note_counts(root: Path) -> dict:
    """How many of the person's notes, and chunks of them, the index holds."""
    from vaultmem.index import ChunkIndex

    paths = [row["path"] for row in ChunkIndex(root).rows(where="type = 'note'", columns=["path"])]
    return {"user_notes": len(set(paths)), "user_note_chunks": len(paths)}


def measure_index(root: Path, embedder, batch_size: int, sample: int = 0) -> dict:
    """A full reindex against raw encode of the same texts, run before and after it (averaged,
    so that a machine getting busier or quieter during the run cancels out). With `sample`,
    raw encode runs over about that many of the texts and is scaled to all of them
    (at 10k memories + 10k user notes each full pass takes half an hour). The sample is every
    n-th slice of EMBED_BATCH_CHUNKS texts in the indexer's order, so each encode call holds
    the kind of texts the indexer's call at that point holds."""
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
    timed = texts
    if 0 < sample < len(texts):
        slices = [texts[n:n + EMBED_BATCH_CHUNKS] for n in range(0, len(texts), EMBED_BATCH_CHUNKS)]
        step = max(1, round(len(slices) / -(-sample // EMBED_BATCH_CHUNKS)))
        timed = [text for piece in slices[::step] for text in piece]
    scale = len(texts) / len(timed)
    before = raw_encode(timed) * scale
    started = time.perf_counter()
    report = memory.reindex(full=True)
    index_s = time.perf_counter() - started
    raw_s = (before + raw_encode(timed) * scale) / 2
    if report["chunks"] != len(texts):
        raise RuntimeError(f"the index embedded {report['chunks']} chunks, raw encode {len(texts)}")
    notes = report["added"] + report["updated"]
    return {"chunks": report["chunks"], **user_note_counts(root), "index_s": index_s, "encode_s": raw_s,
            "index_notes_per_s": notes / index_s, "encode_notes_per_s": notes / raw_s,
            "index_chunks_per_s": len(texts) / index_s, "encode_chunks_per_s": len(texts) / raw_s,
            "index_vs_encode": raw_s / index_s, "encode_sample": len(timed)}


def measure_search(memory, texts: list[str], prefix: str, scope: str = "all") -> dict:
    """p50/p95 in milliseconds of `memory.search(q, k=10, scope=scope)` after three warm-up queries."""
    for text in texts[:3]:
        memory.search(text, k=10, scope=scope)
    times = []
    for text in texts:
        started = time.perf_counter()
        memory.search(text, k=10, scope=scope)
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


def searchable_after(root: Path, rel: str, word: str, deadline_s: float) -> float:
    """Seconds from now until a hit of the daemon's search for `word` is `rel` showing it
    (polled through the socket client every 10 ms)."""
    from vaultmem.client import request

    written = time.perf_counter()
    while True:
        hits = request(root, "search", {"query": word, "k": 5, "scope": "all"})["hits"]
        if any(h["path"] == rel and word in h["text"] for h in hits):
            return time.perf_counter() - written
        if time.perf_counter() - written > deadline_s:
            raise RuntimeError(f"an edit to {rel} was not searchable after {deadline_s:.0f} s")
        time.sleep(0.01)


def measure_edits(root: Path, edits: int, deadline_s: float = 30.0) -> dict:
    """Append a sentence with a unique word to a memory note; time until search shows it."""
    import random

    notes = sorted((root / "Memory" / "Facts").glob("*.md"))
    rng = random.Random(3)
    latencies = []
    for number, path in enumerate(rng.sample(notes, min(edits, len(notes)))):
        word = f"zqv{number}k{rng.randrange(10**6)}x"
        with path.open("a", encoding="utf-8") as out:
            out.write(f"\nIts codeword is {word}.\n")
        latencies.append(searchable_after(root, path.relative_to(root).as_posix(), word, deadline_s))
    return {"edit_to_searchable_p50_s": percentile(latencies, 0.5),
            "edit_to_searchable_p95_s": percentile(latencies, 0.95), "edits": len(latencies)}


def paragraph_lines(lines: list[str]) -> list[int]:
    """Indexes of a note's plain paragraph lines (no frontmatter, heading, list, table, quote, code)."""
    start = lines.index("---", 1) + 1 if lines[:1] == ["---"] and "---" in lines[1:] else 0
    found, in_code = [], False
    for number in range(start, len(lines)):
        line = lines[number].lstrip()
        if line.startswith(("```", "~~~")):
            in_code = not in_code
        elif not in_code and line and not line.startswith(("#", "-", "*", "|", ">", "1.")):
            found.append(number)
    return found


def measure_user_note_edits(root: Path, edits: int, deadline_s: float = 30.0) -> dict:
    """Add a sentence with a unique word to a paragraph of one of the person's notes, the file
    rewritten in place as an editor saves it; time until search shows the new text."""
    import random

    from vaultmem.vault import Vault

    notes = list(Vault(root).iter_user_notes())
    rng = random.Random(5)
    latencies = []
    for number, path in enumerate(rng.sample(notes, min(edits, len(notes)))):
        lines = path.read_text(encoding="utf-8").split("\n")
        paragraphs = paragraph_lines(lines)
        if paragraphs:   # every generated note has one; a hand-made vault may not
            word = f"zqn{number}k{rng.randrange(10**6)}x"
            at = rng.choice(paragraphs)
            lines[at] = f"{lines[at]} Its codeword is {word}."
            path.write_text("\n".join(lines), encoding="utf-8")
            latencies.append(searchable_after(root, path.relative_to(root).as_posix(), word, deadline_s))
    if not latencies:
        raise RuntimeError("no note of the person's has a paragraph to edit")
    return {"edit_user_note_to_searchable_p50_s": percentile(latencies, 0.5),
            "edit_user_note_to_searchable_p95_s": percentile(latencies, 0.95), "user_note_edits": len(latencies)}


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
    print(f"{'figure':<36} {'value':>12}  goal")
    bounds = {name: f"{op} {bound}" for name, op, bound in GOALS}
    for name, value in figures.items():
        shown = f"{value:12.3f}" if isinstance(value, float) else f"{value!s:>12}"
        mark = {True: "met", False: "MISSED", None: ""}[met.get(name)]
        print(f"{name:<36} {shown}  {bounds.get(name, '')} {mark}".rstrip())
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, help="memory notes to generate (default 10000)")
    parser.add_argument("--user-notes", type=int,
                        help="the person's own notes to generate outside Memory/ (default 10000)")
    parser.add_argument("--quick", action="store_true", help="200 notes of each, few queries and edits")
    parser.add_argument("--queries", type=int, help="timed in-process queries (default 200)")
    parser.add_argument("--edits", type=int,
                        help="edits timed through the daemon, of memory notes and of user notes each (default 20)")
    parser.add_argument("--cold-runs", type=int, help="cold CLI searches (default 3)")
    parser.add_argument("--warm-runs", type=int, help="CLI searches answered by the daemon (default 20)")
    parser.add_argument("--idle-seconds", type=float, help="idle CPU window (default 60)")
    parser.add_argument("--large-chunks", type=int, help=f"size of the large index (default {LARGE_CHUNKS})")
    parser.add_argument("--encode-sample", type=int, default=0,
                        help="time raw encode on this many chunk texts drawn at random, scaled to all "
                             "(default 0: all of them, twice)")
    parser.add_argument("--json", dest="json_out", type=Path, help="write the full report here")
    args = parser.parse_args(argv)
    quick = {"notes": 200, "user_notes": 200, "queries": 10, "edits": 3, "cold_runs": 1, "warm_runs": 5,
             "idle_seconds": 5.0, "large_chunks": 2000}
    full = {"notes": 10_000, "user_notes": 10_000, "queries": 200, "edits": 20, "cold_runs": 3, "warm_runs": 20,
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
    texts, note_texts = queries(args.queries), note_queries(args.queries)
    with tempfile.TemporaryDirectory(prefix="vaultmem-perf-") as tmp:
        root = Path(tmp) / "vault"
        log(f"perf: generating {args.notes} memory notes and {args.user_notes} user notes in {root}")
        run.figures.update(notes=args.notes, **{k: v for k, v in generate_vault(root, args.notes).items()
                                                if k == "session_notes"})
        generated = generate_user_notes(root, args.user_notes)
        run.figures["user_note_words_mean"] = generated["user_note_words"] / max(1, args.user_notes)
        embedder = Embedder()
        init(root, model=embedder.name)  # the model raw encode is timed with, whatever the notes' language
        import torch

        # Context for reading the latencies: a busy machine and torch's thread count
        # (2 OpenMP threads on a 2-core machine with other work ran queries 60x slower here).
        run.figures.update(torch_threads=torch.get_num_threads(), load_average_start=os.getloadavg()[0])
        embedder.encode(texts[:8])  # load and warm the model before anything is timed
        run.part("index", measure_index, root, embedder, BATCH_SIZE, args.encode_sample)
        run.part("search", measure_search, open_memory(root, embedder), texts, "search")
        run.part("search notes", measure_search, open_memory(root, embedder), note_texts, "search_notes")
        run.part("no-change scan", measure_nochange_scan, root)
        cold = run.part("cold search", measure_cold_cli, root, texts[:args.cold_runs])
        try:
            daemon = {}
            if run.part("daemon start", measure_daemon_start, root, daemon):
                run.part("warm search", measure_warm_cli, root, queries(args.warm_runs, seed=8),
                         (cold or {}).get("cold_search_s"))
                run.part("edit to searchable", measure_edits, root, args.edits)
                run.part("user note edit to searchable", measure_user_note_edits, root, args.edits)
                run.part("idle", measure_idle, daemon["pid"], args.idle_seconds)
        finally:  # also after a start that timed out: never leave a daemon behind
            run.part("daemon stop", lambda: cli(root, "daemon", "stop", "--json") and {})
        large = run.part("large index", lambda: {"large_chunks": insert_synthetic_chunks(
            root, args.large_chunks, embedder.dim), "large_vectors": "synthetic random unit vectors"})
        if large:
            run.part("large search", measure_search, open_memory(root, embedder), texts, "large_search")
            run.part("large search notes", measure_search, open_memory(root, embedder), note_texts,
                     "large_search_notes")
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
