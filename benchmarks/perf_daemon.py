"""What `perf.py` measures through the daemon of its vault, for one embedding runtime: start,
searches answered by it (`vaultmem search` wall time), edit-to-searchable latency of memory
notes and of the person's notes, CPU over an idle window, and its memory afterwards."""

from __future__ import annotations

import os
import time
from pathlib import Path

from perf_runtime import cli, percentile, process_memory, set_runtime
from perf_vault import queries


def measure_daemon(run, root: Path, runtime: str, args, seed: int) -> None:
    daemon, cold = {}, run.figures.get(f"cold_search_s_{runtime}")
    try:
        if run.part("daemon start", measure_daemon_start, root, runtime, daemon, runtime=runtime):
            run.part("warm search", measure_warm_cli, root, queries(args.warm_runs, seed=8), cold, runtime=runtime)
            run.part("edit to searchable", measure_edits, root, args.edits, 3 + seed, runtime=runtime)
            run.part("user note edit to searchable", measure_user_note_edits, root, args.edits, 5 + seed,
                     runtime=runtime)
            run.part("idle", measure_idle, daemon["pid"], args.idle_seconds, runtime=runtime)
    finally:  # also after a start that timed out: never leave a daemon behind
        run.part("daemon stop", lambda: cli(root, "daemon", "stop", "--json") and {}, runtime=runtime)


def measure_warm_cli(root: Path, texts: list[str], cold_s: float | None) -> dict:
    cli(root, "search", texts[0], "--json")  # the daemon's first query warms its caches
    walls = [cli(root, "search", text, "--json")[0] for text in texts]
    warm = percentile(walls, 0.5)
    return {"warm_search_s": warm, "warm_search_p95_s": percentile(walls, 0.95),
            "warm_speedup": (cold_s / warm) if cold_s else None}


def measure_daemon_start(root: Path, runtime: str, daemon: dict) -> dict:
    """`vaultmem daemon start` with `runtime` in the config (returns once the daemon answers);
    its pid goes in `daemon`."""
    set_runtime(root, runtime)
    wall, result = cli(root, "daemon", "start", "--json", runtime=runtime)
    daemon["pid"] = int(result["pid"])
    return {"daemon_start_s": wall}


def searchable_after(root: Path, rel: str, word: str, deadline_s: float) -> float:
    """Seconds from now until a hit of the daemon's search for `word` is `rel` showing it
    (polled through the socket client every 10 ms)."""
    from vaultmem.ipc.client import request

    written = time.perf_counter()
    while True:
        hits = request(root, "search", {"query": word, "k": 5, "scope": "all"})["hits"]
        if any(h["path"] == rel and word in h["text"] for h in hits):
            return time.perf_counter() - written
        if time.perf_counter() - written > deadline_s:
            raise RuntimeError(f"an edit to {rel} was not searchable after {deadline_s:.0f} s")
        time.sleep(0.01)


def measure_edits(root: Path, edits: int, seed: int = 3, deadline_s: float = 30.0) -> dict:
    """Append a sentence with a unique word to a memory note; time until search shows it."""
    import random

    notes = sorted((root / "Memory" / "Facts").glob("*.md"))
    rng = random.Random(seed)
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


def measure_user_note_edits(root: Path, edits: int, seed: int = 5, deadline_s: float = 30.0) -> dict:
    """Add a sentence with a unique word to a paragraph of one of the person's notes, the file
    rewritten in place as an editor saves it; time until search shows the new text."""
    import random

    from vaultmem.store.vault import Vault

    notes = list(Vault(root).iter_user_notes())
    rng = random.Random(seed)
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
    """The daemon's CPU over an idle window (% of one core), then its resident memory (after
    its startup scan, the queries and the edits), its peak, and the runtime libraries it loaded."""
    time.sleep(min(5.0, seconds))  # let the last edit's batch settle
    ticks, started = cpu_ticks(pid), time.perf_counter()
    time.sleep(seconds)
    used = (cpu_ticks(pid) - ticks) / os.sysconf("SC_CLK_TCK")
    memory = process_memory(pid)
    return {"daemon_idle_cpu_percent": 100 * used / (time.perf_counter() - started),
            "daemon_rss_mb": memory["rss_mb"], "daemon_peak_rss_mb": memory["peak_rss_mb"],
            "daemon_torch_loaded": memory["torch_loaded"], "idle_seconds": seconds}
