"""vaultmem performance figures (SPEC §6), measured in one run on a generated vault, for each
embedding runtime side by side (ONNX Runtime, the default, and sentence-transformers on torch).

    python benchmarks/perf.py --notes 10000 --user-notes 10000 --json report.json
    python benchmarks/perf.py --quick            # a few hundred notes, short windows
    python benchmarks/perf.py --runtimes onnx    # one runtime only

The vault holds memory notes and, beside them, the person's own notes outside `Memory/`
(read-only to vaultmem). Figures, per runtime: a full `vaultmem reindex --full` (its time
against raw encode of the same chunk texts by the same runtime, a ratio so that machine speed
cancels, and its peak RSS); raw encode throughput; in-process search p50/p95 for memory
questions and for questions about the person's notes, at the vault's size and at 1M chunks
(rows mixing the vault's own vectors, inserted through `vaultmem.index.table`: perf_scale.py),
there through the vector index, with its recall@10 against exact search and the daemon's
RSS; a cold
`vaultmem search` and `vaultmem add` (no daemon: wall time and peak RSS) against a search
answered by the daemon; edit-to-searchable latency through the daemon; the daemon's idle
CPU and RSS; the ingest rate of `Memory.extract` on LoCoMo (turns per CPU second). Once:
the no-change startup scan, and the lowest cosine between the two runtimes' vectors.
A figure of one runtime is named `<figure>_<runtime>`; the unsuffixed name is the first
runtime's (the default, onnx), as before. A part whose command fails is reported as null
with its reason under "skipped". The last stdout line is one JSON object of the figures;
progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from perf_daemon import measure_daemon  # noqa: E402
from perf_runtime import (  # noqa: E402
    RUNTIMES,
    available_runtimes,
    cli_measured,
    measure_ingest,
    measure_model_load,
    min_cosine,
    percentile,
    set_runtime,
)
from perf_scale import grow_table, measure_ann_recall, measure_fold, measure_large_daemon  # noqa: E402
from perf_vault import generate_user_notes, generate_vault, note_queries, queries, sentence  # noqa: E402

LARGE_CHUNKS = 1_000_000
LOCOMO_DEV = ROOT.parent / "shared" / "eval" / "locomo" / "locomo-dev.json"
# SPEC's and issue 19's goals, reported beside the figures: (figure, comparison, bound); a
# goal holds for the figure of every runtime. The person's own notes get the goals of the memories.
GOALS = [("index_vs_encode", ">=", 0.85), ("index_peak_rss_mb", "<=", 600.0),
         ("edit_to_searchable_p95_s", "<=", 1.0), ("edit_user_note_to_searchable_p95_s", "<=", 1.0),
         ("cold_search_s", "<=", 2.0), ("cold_search_rss_mb", "<=", 350.0), ("cold_add_s", "<=", 2.5),
         ("warm_search_s", "<=", 0.25), ("warm_speedup", ">=", 30.0),
         ("search_p50_ms", "<=", 15.0), ("search_notes_p50_ms", "<=", 15.0),
         ("large_search_p50_ms", "<=", 40.0), ("nochange_scan_s", "<=", 1.0),
         ("daemon_idle_cpu_percent", "<=", 0.5), ("daemon_rss_mb", "<=", 450.0),
         # Issue 36's: a first index of 10k person's notes in 6 min (its `index_s` at
         # --user-notes 10000), the default install's cold commands, a million chunks.
         ("index_s", "<=", 360.0), ("large_search_p95_ms", "<=", 80.0), ("large_ann_recall_at_10", ">=", 0.95),
         ("large_daemon_rss_mb", "<=", 800.0),
         ("runtime_min_cosine", ">=", 0.999), ("ingest_vs_baseline", ">=", 3.0)]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def open_memory(root: Path, embedder=None):
    from vaultmem.api import Memory

    return Memory(root, embedder=embedder)  # the warm model of this run, loaded once


def chunk_texts(memory) -> list[str]:
    """The texts the indexer embeds for this vault: every chunk's `search_text`, memory notes
    and the person's own notes, cut by the indexer's own `chunks_of`."""
    from vaultmem.index.ingest import chunks_of

    vault, texts = memory.vault, []
    for item in vault.iter_indexed():
        path = Path(getattr(item, "path", item))
        texts.extend(c.search_text for c in chunks_of(vault, vault.rel(path), path.read_bytes(), path))
    return texts


def user_note_counts(root: Path) -> dict:
    """How many of the person's notes, and chunks of them, the index holds."""
    from vaultmem.index.table import ChunkIndex

    paths = [row["path"] for row in ChunkIndex(root).rows(where="type = 'note'", columns=["path"])]
    return {"user_notes": len(set(paths)), "user_note_chunks": len(paths)}


def sampled(texts: list[str], sample: int) -> list[str]:
    """About `sample` of the texts: every n-th slice of EMBED_BATCH_CHUNKS in the indexer's
    order, so each encode call holds the kind of texts the indexer's call at that point holds."""
    from vaultmem.index.ingest import EMBED_BATCH_CHUNKS

    if not 0 < sample < len(texts):
        return texts
    slices = [texts[n:n + EMBED_BATCH_CHUNKS] for n in range(0, len(texts), EMBED_BATCH_CHUNKS)]
    step = max(1, round(len(slices) / -(-sample // EMBED_BATCH_CHUNKS)))
    return [text for piece in slices[::step] for text in piece]


def raw_encode(embedder, texts: list[str], batch_size: int) -> tuple[float, float]:
    """(wall, CPU seconds of this process) the runtime itself (`Embedder.backend`: no cache of
    recent texts) takes over the texts in the indexer's slices (one call over all texts
    measured 1.6x slower than slices of 512, which would flatter the ratio)."""
    from vaultmem.index.ingest import EMBED_BATCH_CHUNKS

    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), EMBED_BATCH_CHUNKS):
        embedder.backend.encode(texts[start:start + EMBED_BATCH_CHUNKS], batch_size)
    return time.perf_counter() - started, time.process_time() - cpu


def measure_index(root: Path, runtime: str, embedder, texts: list[str], batch_size: int, sample: int,
                  load: dict) -> dict:
    """A full `vaultmem reindex --full` in a child process against raw encode of the same texts
    by the same runtime here, run before and after it (averaged, so that a machine getting
    busier or quieter cancels out). The index time is the indexer's own clock (`seconds` of
    the report) less the model load measured apart (`load`); its CPU is the child's less the
    load's, so the CPU ratio also counts the child's start and imports. With `sample`, raw
    encode runs over about that many texts and is scaled to all (at 10k + 10k notes each full
    pass takes minutes)."""
    timed = sampled(texts, sample)
    scale = len(texts) / len(timed)
    before = raw_encode(embedder, timed, batch_size)
    set_runtime(root, runtime)
    done, report = cli_measured(root, "reindex", "--full", "--json", runtime=runtime, daemon=False,
                                timeout=4 * 3600)
    after = raw_encode(embedder, timed, batch_size)
    raw_s, raw_cpu = (before[0] + after[0]) / 2 * scale, (before[1] + after[1]) / 2 * scale
    if report["chunks"] != len(texts):
        raise RuntimeError(f"the index embedded {report['chunks']} chunks, raw encode {len(texts)}")
    index_s = max(1e-3, report["seconds"] - load.get("model_load_s", 0.0))
    index_cpu = max(1e-3, done.cpu_s - load.get("model_load_cpu_s", 0.0))
    notes = report["added"] + report["updated"]
    return {"chunks": report["chunks"], **user_note_counts(root), "index_s": index_s,
            "index_wall_s": done.wall_s, "index_peak_rss_mb": done.peak_rss_mb, "index_cpu_s": index_cpu,
            "encode_s": raw_s, "encode_cpu_s": raw_cpu, "index_notes_per_s": notes / index_s,
            "encode_notes_per_s": notes / raw_s, "index_chunks_per_s": len(texts) / index_s,
            "encode_chunks_per_s": len(texts) / raw_s, "index_vs_encode": raw_s / index_s,
            "index_vs_encode_cpu": raw_cpu / index_cpu, "encode_sample": len(timed)}


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
    """A fresh process-like start (new Memory, no model) reconciling an unchanged vault, after
    one untimed scan that pays this process's imports (the index was built by a child)."""
    open_memory(root).reindex()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        report = open_memory(root).reindex()
        times.append(time.perf_counter() - started)
        if report["added"] or report["updated"] or report["removed"]:
            raise RuntimeError(f"the no-change scan found changes: {report}")
    return {"nochange_scan_s": times[0], "nochange_scan_median_s": percentile(times, 0.5)}


def measure_ingest_vs_baseline(baseline: Path, data: Path, rounds: int, runtime: str) -> dict:
    """benchmarks/ingest_rate.py of an earlier checkout and of this one, in turns, `rounds`
    times each: the medians and their ratio (this machine's speed moves between runs; the
    two are measured side by side)."""
    import statistics

    def rate(*extra) -> float:
        done = subprocess.run([sys.executable, str(Path(__file__).with_name("ingest_rate.py")), "--json",
                               "--data", str(data), *extra], capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise RuntimeError(f"ingest_rate.py {' '.join(extra)} failed: {done.stderr.strip()[-500:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])["turns_per_cpu_s"]

    if not (baseline / "vaultmem").is_dir():
        raise OSError(f"--ingest-baseline {baseline} is not a vaultmem checkout")
    before, now = [], []
    for _ in range(rounds):
        before.append(rate("--code", str(baseline)))
        now.append(rate("--runtime", runtime))
    old, new = statistics.median(before), statistics.median(now)
    return {"ingest_baseline_turns_per_cpu_s": old, "ingest_child_turns_per_cpu_s": new,
            "ingest_vs_baseline": new / old, "ingest_baseline_code": str(baseline),
            "ingest_rounds": rounds}


def measure_cold_cli(root: Path, runtime: str, texts: list[str]) -> dict:
    """`vaultmem search` with no daemon: median wall, largest peak RSS and median CPU of the runs."""
    runs = [cli_measured(root, "search", text, "--json", runtime=runtime, daemon=False)[0] for text in texts]
    return {"cold_search_s": percentile([r.wall_s for r in runs], 0.5),
            "cold_search_rss_mb": max(r.peak_rss_mb for r in runs),
            "cold_search_cpu_s": percentile([r.cpu_s for r in runs], 0.5)}


def measure_cold_add(root: Path, runtime: str, runs: int) -> dict:
    """`vaultmem add "<a new fact>"` with no daemon (write policy, note, git commit, index)."""
    import random

    rng = random.Random(f"add-{runtime}")
    done = [cli_measured(root, "add", f"{sentence(rng, 'fact')} Its tag is zqa{rng.randrange(10**6)}x.",
                         "--json", runtime=runtime, daemon=False)[0] for _ in range(runs)]
    return {"cold_add_s": percentile([r.wall_s for r in done], 0.5),
            "cold_add_rss_mb": max(r.peak_rss_mb for r in done)}


# Figures a part of one runtime returns that do not depend on the runtime: kept unsuffixed.
SHARED = {"chunks", "user_notes", "user_note_chunks", "encode_sample", "edits", "user_note_edits",
          "idle_seconds", "ingest_conversations", "ingest_turns"}


class Run:
    """Figures of one run, and the reason of each part that could not be measured. A part of
    one runtime files its figures as `<figure>_<runtime>`, and the first runtime's also under
    the bare name (what readers of earlier reports look for)."""

    def __init__(self, runtimes: list[str]):
        self.runtimes = runtimes
        self.figures: dict = {}
        self.skipped: dict[str, str] = {}

    def part(self, name: str, measure, *args, runtime: str | None = None):
        label = f"{name} ({runtime})" if runtime else name
        log(f"perf: {label} ...")
        started = time.perf_counter()
        try:
            result = measure(*args)
        except (RuntimeError, OSError, subprocess.SubprocessError, ImportError, ValueError) as exc:
            return self._skip(label, exc)
        except Exception as exc:  # vaultmem's own errors (e.g. DaemonError), a harness bug
            # A part that fails is reported with its reason; the run's other figures stand.
            import traceback

            log(traceback.format_exc())
            return self._skip(label, exc)
        for key, value in result.items():
            if runtime is None or key in SHARED:
                self.figures[key] = value
                continue
            self.figures[f"{key}_{runtime}"] = value
            if runtime == self.runtimes[0]:
                self.figures[key] = value
        log(f"perf: {label} done in {time.perf_counter() - started:.1f} s")
        return result

    def _skip(self, label: str, exc: BaseException):
        self.skipped[label] = f"{type(exc).__name__}: {exc}"
        log(f"perf: {label} skipped: {self.skipped[label]}")
        return None


def base_name(name: str) -> tuple[str, str | None]:
    """(figure, runtime) of a figure's name: `cold_search_s_torch` is ("cold_search_s", "torch")."""
    for runtime in RUNTIMES:
        if name.endswith(f"_{runtime}"):
            return name[:-len(runtime) - 1], runtime
    return name, None


def goals(figures: dict) -> dict:
    """met (True/False, None when not measured) of every figure, bare or per runtime, that has a goal."""
    bounds = {name: (op, bound) for name, op, bound in GOALS}
    met = {}
    for name in [*bounds, *figures]:
        base = base_name(name)[0]
        if base in bounds and name not in met:
            op, bound = bounds[base]
            value = figures.get(name)
            met[name] = None if not isinstance(value, (int, float)) else (
                value >= bound if op == ">=" else value <= bound)
    return met


def shown(value) -> str:
    return f"{value:.3f}" if isinstance(value, float) else "-" if value is None else str(value)


def print_summary(figures: dict, skipped: dict, met: dict, runtimes: list[str]) -> None:
    bounds = {name: f"{op} {bound}" for name, op, bound in GOALS}
    marks = {True: "met", False: "MISSED", None: ""}
    per_runtime = list(dict.fromkeys(base for base, runtime in map(base_name, figures) if runtime))
    print(f"{'figure':<36} {'value':>12}  goal")
    for name, value in figures.items():
        if name not in per_runtime and base_name(name)[1] is None:
            print(f"{name:<36} {shown(value):>12}  {bounds.get(name, '')} {marks[met.get(name)]}".rstrip())
    print()
    print(f"{'figure, per runtime':<36}" + "".join(f" {runtime:>12} {'':<6}" for runtime in runtimes) + " goal")
    for base in per_runtime:
        cells = "".join(f" {shown(figures.get(f'{base}_{runtime}')):>12} {marks[met.get(f'{base}_{runtime}')]:<6}"
                        for runtime in runtimes)
        print(f"{base:<36}{cells} {bounds.get(base, '')}".rstrip())
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, help="memory notes to generate (default 10000)")
    parser.add_argument("--user-notes", type=int,
                        help="the person's own notes to generate outside Memory/ (default 10000)")
    parser.add_argument("--quick", action="store_true",
                        help="200 notes of each, few queries, edits and runs, the first 2 sessions of one LoCoMo "
                             "conversation")
    parser.add_argument("--runtimes", type=lambda text: [r.strip() for r in text.split(",") if r.strip()],
                        help="embedding runtimes to measure, the first one's figures also under the bare "
                             "names (default: onnx,torch when torch is installed, else onnx)")
    parser.add_argument("--queries", type=int, help="timed in-process queries (default 200)")
    parser.add_argument("--edits", type=int,
                        help="edits timed through the daemon, of memory notes and of user notes each (default 20)")
    parser.add_argument("--cold-runs", type=int, help="cold CLI searches and adds (default 3)")
    parser.add_argument("--warm-runs", type=int, help="CLI searches answered by the daemon (default 20)")
    parser.add_argument("--idle-seconds", type=float, help="idle CPU window (default 60)")
    parser.add_argument("--large-chunks", type=int, help=f"size of the large index (default {LARGE_CHUNKS}; 0: none)")
    parser.add_argument("--model", help="the vault's embedding model (default: the bundled all-MiniLM-L6-v2); "
                                        "use-multilingual-v3 for the row of Chinese vaults")
    parser.add_argument("--encode-sample", type=int,
                        help="time raw encode on about this many chunk texts, scaled to all "
                             "(default 0: all of them, twice; --quick: 256)")
    parser.add_argument("--cosine-texts", type=int,
                        help="chunk texts (and 20 questions of each kind) the two runtimes' vectors are "
                             "compared on (default 400; --quick: 40)")
    parser.add_argument("--ingest-data", type=Path, default=LOCOMO_DEV,
                        help="LoCoMo-format data extracted for the ingest rate (default: the dev split)")
    parser.add_argument("--ingest-conversations", type=int,
                        help="conversations of it to extract (default 0: all; --quick: 1)")
    parser.add_argument("--ingest-sessions", type=int,
                        help="first sessions of each conversation (default 0: all; --quick: 2)")
    parser.add_argument("--ingest-baseline", type=Path,
                        help="an earlier checkout (git worktree add DIR COMMIT) whose ingest rate is "
                             "measured beside this one's, alternately (ingest_rate.py)")
    parser.add_argument("--ingest-rounds", type=int, default=2,
                        help="runs of each for --ingest-baseline (default 2; the medians are compared)")
    parser.add_argument("--json", dest="json_out", type=Path, help="write the full report here")
    args = parser.parse_args(argv)
    quick = {"notes": 200, "user_notes": 200, "queries": 10, "edits": 3, "cold_runs": 1, "warm_runs": 5,
             "idle_seconds": 5.0, "large_chunks": 2000, "encode_sample": 256, "ingest_conversations": 1,
             "ingest_sessions": 2, "cosine_texts": 40}
    full = {"notes": 10_000, "user_notes": 10_000, "queries": 200, "edits": 20, "cold_runs": 3, "warm_runs": 20,
            "idle_seconds": 60.0, "large_chunks": LARGE_CHUNKS, "encode_sample": 0, "ingest_conversations": 0,
            "ingest_sessions": 0, "cosine_texts": 400}
    for key, default in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, default)
    args.runtimes = args.runtimes or available_runtimes()
    unknown = [r for r in args.runtimes if r not in RUNTIMES]
    if unknown or not args.runtimes:
        parser.error(f"--runtimes takes {' and/or '.join(RUNTIMES)}, not {','.join(unknown) or 'nothing'}")
    return args


def load_embedders(run: Run, model: str) -> tuple[dict, dict]:
    """One warm embedder per runtime, and the figures of a cold load of it in a child process;
    a runtime that cannot be loaded is dropped from the run."""
    from vaultmem.index.embed import Embedder

    embedders, loads = {}, {}
    for runtime in list(run.runtimes):
        loads[runtime] = run.part("model load", measure_model_load, runtime, model, runtime=runtime)
        if loads[runtime]:
            embedders[runtime] = Embedder(model, runtime=runtime)
        else:
            run.runtimes.remove(runtime)
    if not embedders:
        raise SystemExit(f"no embedding runtime could be loaded: {run.skipped}")
    if "torch" in embedders:
        import torch

        # Context for reading the latencies: torch's thread count (2 OpenMP threads on a
        # 2-core machine with other work ran queries 60x slower here).
        run.figures["torch_threads"] = torch.get_num_threads()
    return embedders, loads


def main(argv=None) -> int:
    args = parse_args(argv)
    from vaultmem.api import init
    from vaultmem.index.embed import BATCH_SIZE, default_threads
    from vaultmem.store.config import DEFAULT_MODEL

    run = Run(list(args.runtimes))
    texts, note_texts = queries(args.queries), note_queries(args.queries)
    with tempfile.TemporaryDirectory(prefix="vaultmem-perf-") as tmp:
        root = Path(tmp) / "vault"
        log(f"perf: generating {args.notes} memory notes and {args.user_notes} user notes in {root}")
        run.figures.update(notes=args.notes, **{k: v for k, v in generate_vault(root, args.notes).items()
                                                if k == "session_notes"})
        generated = generate_user_notes(root, args.user_notes)
        run.figures["user_note_words_mean"] = generated["user_note_words"] / max(1, args.user_notes)
        # The model raw encode is timed with, whatever the notes' language.
        init(root, model=args.model or DEFAULT_MODEL)
        run.figures["model"] = args.model or DEFAULT_MODEL
        run.figures.update(embed_threads=default_threads(), load_average_start=os.getloadavg()[0])
        embedders, loads = load_embedders(run, args.model or DEFAULT_MODEL)
        run.figures["runtimes"] = list(run.runtimes)
        primary = run.runtimes[0]
        all_texts = chunk_texts(open_memory(root))
        step = max(1, -(-len(all_texts) // args.cosine_texts))
        run.part("runtime cosine", min_cosine, embedders, all_texts[::step] + texts[:20] + note_texts[:20])
        # The first runtime indexes last: the rest of the run searches its vectors.
        for runtime in reversed(run.runtimes):
            run.part("index", measure_index, root, runtime, embedders[runtime], all_texts, BATCH_SIZE,
                     args.encode_sample, loads.get(runtime) or {}, runtime=runtime)
        set_runtime(root, primary)
        for runtime in run.runtimes:
            run.part("search", measure_search, open_memory(root, embedders[runtime]), texts, "search",
                     runtime=runtime)
            run.part("search notes", measure_search, open_memory(root, embedders[runtime]), note_texts,
                     "search_notes", runtime=runtime)
        run.part("no-change scan", measure_nochange_scan, root)
        for number, runtime in enumerate(run.runtimes):
            set_runtime(root, runtime)
            run.part("cold search", measure_cold_cli, root, runtime, texts[:args.cold_runs], runtime=runtime)
            run.part("cold add", measure_cold_add, root, runtime, args.cold_runs, runtime=runtime)
            measure_daemon(run, root, runtime, args, 100 * number)
        set_runtime(root, primary)
        for runtime in run.runtimes:
            run.part("ingest", measure_ingest, embedders[runtime], args.ingest_data, args.ingest_conversations,
                     args.ingest_sessions, Path(tmp), runtime=runtime)
        if args.ingest_baseline:
            run.part("ingest vs baseline", measure_ingest_vs_baseline, args.ingest_baseline.resolve(),
                     args.ingest_data, args.ingest_rounds, primary)
        large = run.part("large index", grow_table, root, args.large_chunks) if args.large_chunks else None
        for runtime in run.runtimes if large else []:
            run.part("large search", measure_search, open_memory(root, embedders[runtime]), texts,
                     "large_search", runtime=runtime)
            run.part("large search notes", measure_search, open_memory(root, embedders[runtime]), note_texts,
                     "large_search_notes", runtime=runtime)
        if large:
            run.part("large vector index recall", measure_ann_recall, root, embedders[primary], texts + note_texts)
            run.part("large daemon", measure_large_daemon, root, primary, queries(args.warm_runs, seed=8))
            run.part("large fold", measure_fold, root)
    run.figures["load_average_end"] = os.getloadavg()[0]
    met = goals(run.figures)
    print_summary(run.figures, run.skipped, met, run.runtimes)
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
