"""Kill vaultmem writers with SIGKILL at random moments and check the vault after each.

    python tests/helpers/crash_driver.py VAULT --points 44 --daemon-points 6 --seed 7 --json OUT

The model loads once here (one thread); each kill point forks a child that runs a real
`Memory.extract` / `add` / `correct` / `forget` on the shared vault, and this process sends
SIGKILL after a random delay spread over a measured run of that operation. The "restart"
is a fresh fork that does what a new process does first (`Memory(root).reindex()`), and the
checks then look for truncated notes, stray temp files, a stale `.git/index.lock`, a
broken repository (`git fsck --strict`) and index drift (`doctor`).

This process never opens LanceDB itself (only forked children do), so no runtime thread
of the parent is missing in a child.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

CITIES = ["Lisbon", "Porto", "Berlin", "Madrid", "Oslo", "Vienna", "Prague", "Dublin", "Krakow",
          "Turin", "Lyon", "Ghent", "Bergen", "Graz", "Seville", "Bremen"]
PETS = ["Rex", "Luna", "Milo", "Nala", "Otis", "Pip", "Juno", "Ziggy", "Bruno", "Coco", "Finn"]
HOBBIES = ["rock climbing", "pottery", "chess", "sailing", "baking bread", "birdwatching",
           "kayaking", "knitting", "archery", "gardening", "fencing", "calligraphy"]
JOBS = [("nurse", "St Mary's Hospital"), ("teacher", "Riverside School"), ("chef", "Casa Verde"),
        ("pilot", "Blue Air"), ("librarian", "the city library"), ("architect", "Studio Nord")]


def transcript(folder: Path, n: int) -> Path:
    """Run n's transcript: a move (supersedes the last home), a restated fact (merged into
    the existing note), a new job (supersede), a new pet (a new entity hub), a new hobby."""
    day = f"2026-11-{1 + n % 28:02d}"
    job, place = JOBS[n % len(JOBS)]
    texts = [
        "My name is Alice.",
        f"Actually, I moved to {CITIES[n % len(CITIES)]}.",
        f"I work as a {job} at {place}.",
        f"My dog {PETS[n % len(PETS)]} loves the beach.",
        f"I love {HOBBIES[n % len(HOBBIES)]} on weekends.",
        "I hate crowded trains.",
    ]
    path = folder / f"run-{n:04d}.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for i, text in enumerate(texts):
            out.write(json.dumps({"session": f"crash-{n}", "id": f"m-{i + 1}",
                                  "time": f"{day}T10:{i:02d}:00", "speaker": "Alice",
                                  "role": "user", "text": text}) + "\n")
    return path


def operation(n: int, root: Path, work: Path):
    """What child n runs: mostly extraction runs, sometimes add / correct / forget."""
    kind = ("extract", "extract", "extract", "add", "extract", "correct", "extract", "forget")[n % 8]
    if kind == "extract":
        path = transcript(work, n)
        return kind, lambda mem: mem.extract([path])
    if kind == "add":
        return kind, lambda mem: mem.add(f"The user owns a bicycle called Bike{n}.", type="fact")

    def pick(mem, status="active"):
        notes = [x for x in mem.list(type="fact", status=status)["notes"]]
        return notes[n % len(notes)]["path"] if notes else None

    if kind == "correct":
        def run(mem):
            ref = pick(mem)
            return ref and mem.correct(ref, f"The user owns {n % 5 + 2} bicycles.")
        return kind, run

    def run(mem):
        ref = pick(mem)
        return ref and mem.forget(ref)
    return kind, run


def fork_run(fn, kill_after: float | None = None) -> tuple[int, float, bytes]:
    """Run fn() in a forked child; SIGKILL it after `kill_after` seconds. Returns
    (exit status, seconds, what the child wrote to its pipe)."""
    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_end)
        code = 0
        try:
            out = fn()
            os.write(write_end, json.dumps(out, default=str).encode())
        except BaseException:
            os.write(write_end, traceback.format_exc().encode())
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    if kill_after is not None:
        deadline = started + kill_after
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(min(0.002, max(0.0, deadline - time.monotonic())))
        else:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    else:
        _, status = os.waitpid(pid, 0)
    data = b""
    while chunk := os.read(read_end, 65536):
        data += chunk
    os.close(read_end)
    return status, time.monotonic() - started, data


def check_vault(root: Path, embedder, reindex: bool = True) -> list[str]:
    """Restart (reindex in a fresh fork; after a daemon cycle its own restart did that),
    then everything that must hold after a crash."""
    from vaultmem.store.note import read_note

    problems = []

    def restart():
        from vaultmem.api import Memory

        mem = Memory(root, embedder=embedder)
        if reindex:
            mem.reindex()
        report = mem.doctor()
        return {"drift": report["drift"], "parse_errors": report["parse_errors"],
                "index_error": report["index_error"]}

    status, _, data = fork_run(restart)
    if status != 0:
        return [f"restart failed: {data.decode(errors='replace')[-2000:]}"]
    doctor = json.loads(data)
    if any(doctor["drift"].values()) or doctor["parse_errors"] or doctor["index_error"]:
        problems.append(f"doctor after restart: {doctor}")
    for path in sorted((root / "Memory").rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.name.startswith(".vaultmem-"):
            problems.append(f"temp file left after restart: {rel}")
            continue
        if path.suffix != ".md" or "/Inbox/" in rel:
            continue
        try:
            note = read_note(path)
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            problems.append(f"{rel} does not parse: {exc}")
            continue
        text = path.read_text(encoding="utf-8")
        if not note.meta.get("id") or not note.meta.get("type") or not note.body.strip() \
                or not text.endswith("\n"):
            problems.append(f"{rel} is truncated or half-written: {text[-200:]!r}")
    if (root / ".git" / "index.lock").exists():
        problems.append(".git/index.lock left behind")
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=root,
                          capture_output=True, text=True)
    bad = [line for line in (fsck.stdout + fsck.stderr).splitlines()
           if line.strip() and not line.startswith("dangling ")]
    if fsck.returncode != 0 or bad:
        problems.append(f"git fsck: {bad}")
    status_run = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True)
    if status_run.returncode != 0:
        problems.append(f"git status fails: {status_run.stderr.strip()}")
    return problems


def spawn(fn) -> int:
    """fn() in a forked child that is left running; returns its pid."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            fn()
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    return pid


def wait_until(predicate, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def daemon_cycle(root: Path, embedder, n: int, rng: random.Random, work: Path) -> tuple[bool, list[str]]:
    """Run the real daemon (forked, model shared), make it index, commit user edits and
    extract, SIGKILL it at a random moment, restart it, wait for its reconciliation, stop
    it; returns (killed mid-work, problems)."""
    from vaultmem.daemon.runner import Daemon, setup_logging
    from vaultmem.ipc import client

    def run_daemon():
        daemon = Daemon(root, embedder=embedder)
        setup_logging(root, foreground=False)
        daemon.run()

    def watching():
        try:
            status = client.try_request(root, "status", timeout=2.0)
        except Exception:  # noqa: BLE001 - not answering yet
            return None
        return status if status and status.get("state") == "watching" else None

    pid = spawn(run_daemon)
    try:
        wait_until(watching, 60, "the daemon to watch")
        facts = root / "Memory" / "Facts"
        extract_thread = __import__("threading").Thread(
            target=lambda: _ignore(lambda: client.request(root, "extract", {"paths": [str(transcript(work, n))]})),
            daemon=True)
        extract_thread.start()
        kill_at = time.monotonic() + rng.uniform(0.05, 2.5)
        edits = 0
        while time.monotonic() < kill_at:
            notes = sorted(facts.glob("*.md"))
            if notes and edits < 6:
                with open(notes[(n + edits) % len(notes)], "a", encoding="utf-8") as handle:
                    handle.write(f"\nA line the user typed in cycle {n}, edit {edits}.\n")
                (facts / f"User note {n}-{edits}.md").write_text(
                    f"---\nid: 01JUSER{n:09d}{edits:010d}\ntype: fact\ncreated: 2026-11-01T09:00:00\n"
                    f"updated: 2026-11-01T09:00:00\nstatus: active\nuser: default\n---\n"
                    f"The user wrote note {edits} of cycle {n} by hand.\n", encoding="utf-8")
                edits += 1
            time.sleep(0.15)
        done, _ = os.waitpid(pid, os.WNOHANG)
        killed = not done
        if killed:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    extract_thread.join(10)
    # Restart: the new daemon reconciles; the vault is checked once it is idle and stopped.
    pid = spawn(run_daemon)
    try:
        wait_until(watching, 60, "the restarted daemon to watch")
        wait_until(lambda: client.request(root, "flush", {"timeout": 10}).get("idle"), 120,
                   "the restarted daemon to catch up")
        client.request(root, "shutdown")
        _, status = os.waitpid(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    problems = [] if status == 0 else [f"restarted daemon exited with status {status}"]
    return killed, problems + check_vault(root, embedder, reindex=False)


def _ignore(fn):
    try:
        fn()
    except Exception:  # noqa: BLE001 - the daemon was killed under this request
        pass


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault", type=Path)
    parser.add_argument("--points", type=int, default=44, help="kills of forked writers")
    parser.add_argument("--daemon-points", type=int, default=6, help="kills of the daemon")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--keep-going", action="store_true", help="do not stop at the first failure")
    options = parser.parse_args(argv)

    import warnings

    warnings.filterwarnings("ignore", message="lancedb fork support", category=RuntimeWarning)
    import torch

    torch.set_num_threads(1)
    import lancedb  # noqa: F401  (imported once; forked children reset its loop)

    from vaultmem import api
    from vaultmem.index.embed import Embedder

    root = options.vault.resolve()
    work = root.parent / "transcripts"
    work.mkdir(exist_ok=True)
    api.init(root)
    embedder = Embedder(api.load_config(root).model)
    embedder.encode(["warm up"])  # loaded before forking: children share it

    def child(n):
        kind, run = operation(n, root, work)

        def go():
            mem = api.Memory(root, embedder=embedder)
            result = run(mem)
            return {"kind": kind, "ok": True, "errors": (result or {}).get("errors", [])}
        return go

    # Seed the vault and measure how long each kind of run takes, uninterrupted.
    measured: dict[str, list[float]] = {}
    for n in range(8):
        kind = operation(n, root, work)[0]
        status, seconds, data = fork_run(child(n))
        if status != 0:
            raise SystemExit(f"seeding run {n} ({kind}) failed: {data.decode(errors='replace')}")
        measured.setdefault(kind, []).append(seconds)
    durations = {kind: sorted(times)[len(times) // 2] for kind, times in measured.items()}
    problems = check_vault(root, embedder)
    if problems:
        raise SystemExit(f"the vault is unhealthy before any kill: {problems}")

    # Kill points are runs really killed mid-way; a run that finished first does not count
    # (its vault is checked all the same).
    rng = random.Random(options.seed)
    results = []
    n = 8
    while sum(r["killed"] for r in results) < options.points and n < 8 + 3 * options.points:
        kind = operation(n, root, work)[0]
        delay = rng.uniform(0.0, durations[kind] * 1.05)
        status, seconds, _ = fork_run(child(n), kill_after=delay)
        n += 1
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        checked = time.monotonic()
        problems = check_vault(root, embedder)
        results.append({"point": len(results), "kind": kind, "delay": round(delay, 3), "killed": killed,
                        "run_s": round(seconds, 2), "check_s": round(time.monotonic() - checked, 2),
                        "problems": problems})
        if problems and not options.keep_going:
            break
    config = root / ".vaultmem" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "commit_quiet_seconds = 5", "commit_quiet_seconds = 0.3"), encoding="utf-8")
    for cycle in range(options.daemon_points):
        if any(r["problems"] for r in results) and not options.keep_going:
            break
        started = time.monotonic()
        killed, problems = daemon_cycle(root, embedder, 1000 + cycle, rng, work)
        results.append({"point": len(results), "kind": "daemon", "killed": killed,
                        "run_s": round(time.monotonic() - started, 2), "problems": problems})
    summary = {"runs": len(results), "killed": sum(r["killed"] for r in results),
               "survived": sum(1 for r in results if r["killed"] and not r["problems"]),
               "durations": durations, "results": results,
               "failed": [r for r in results if r["problems"]]}
    options.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
