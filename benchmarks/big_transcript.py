"""Extraction of one big transcript: memory stays flat, progress shows, the summary is what
the commits hold.

    python benchmarks/big_transcript.py                 # 50,000 turns, offline extractor
    python benchmarks/big_transcript.py --turns 5000 --keep /tmp/big

Generates a jsonl transcript of `--turns` messages across sessions of `--per-session` turns
(a user telling facts, preferences, events, small talk and requests; an assistant
answering), runs `vaultmem extract` on it in a fresh vault in a subprocess, samples the
subprocess's RSS every 0.5 s, and prints peak RSS, whether RSS was flat (the peak of the
second half of the run within `--flat-mb` of the second quarter's), whether progress lines were
shown on stderr, and whether the summary's counts equal what the run's commits hold
(`git show --name-status`). The last stdout line is one JSON object of those figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VAULTMEM = [sys.executable, "-c", "from vaultmem.cli import main; main()"]

CITIES = ["Porto", "Denver", "Lisbon", "Oslo", "Kyoto", "Austin", "Lyon", "Quito", "Perth", "Turin"]
JOBS = ["nurse", "teacher", "chef", "pilot", "carpenter", "designer", "lawyer", "baker"]
LIKES = ["hiking", "jazz", "green tea", "chess", "sailing", "pottery", "sushi", "cycling", "opera", "yoga"]
PETS = ["Max", "Miso", "Luna", "Bruno", "Pip", "Tofu"]
PLACES = ["dentist", "museum", "market", "gym", "library", "beach", "concert"]


def user_line(r: random.Random, n: int) -> str:
    k = r.random()
    if k < 0.10:
        return f"I live in {r.choice(CITIES)} now."
    if k < 0.18:
        return f"I work as a {r.choice(JOBS)}."
    if k < 0.34:
        return f"I love {r.choice(LIKES)}."
    if k < 0.42:
        return f"My dog {r.choice(PETS)} is {r.randint(2, 14)} years old."
    if k < 0.54:
        return f"Yesterday I went to the {r.choice(PLACES)} with my sister, visit number {n}."
    if k < 0.68:
        return "Hi there, how are you today?"
    if k < 0.80:
        return "Can you help me write an email to my landlord?"
    if k < 0.90:
        return f"Project note {n}: the {r.choice(LIKES)} club meets in {r.choice(CITIES)} on Fridays."
    return f"I think the weather in {r.choice(CITIES)} is nice in {r.choice(['May', 'June', 'October'])}."


def write_transcript(path: Path, turns: int, per_session: int = 150, seed: int = 7) -> Path:
    """A jsonl transcript (SPEC §4) of `turns` messages, `per_session` to a session, one
    day apart; written line by line, so its size costs no memory here."""
    r = random.Random(seed)
    start = datetime(2024, 1, 1, 9, 0)
    with open(path, "w", encoding="utf-8") as out:
        n = session = 0
        while n < turns:
            session += 1
            day = start + timedelta(days=session)
            for i in range(min(per_session, turns - n)):
                role = "user" if i % 2 == 0 else "assistant"
                text = user_line(r, n) if role == "user" else "Got it, thanks for telling me."
                out.write(json.dumps({"session": f"chat-{session:05d}", "id": f"s{session}-m{i}",
                                      "time": (day + timedelta(seconds=30 * i)).isoformat(),
                                      "speaker": "Alice" if role == "user" else "assistant",
                                      "role": role, "text": text}) + "\n")
                n += 1
    return path


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def committed(root: Path, run: str) -> dict:
    """What the run's commits hold: paths added (A) and changed (M) in memory folders,
    session and entity notes, every path, and the sum of the subjects' "N new"."""
    shas = [line.split()[0] for line in git(root, "log", "--format=%H %(trailers:key=Vaultmem-Run,valueonly)")
            .splitlines() if line.strip().endswith(run)]
    added, changed, paths, new = set(), set(), set(), 0
    for sha in shas:
        new += int(re.search(r": (\d+) new", git(root, "log", "-1", "--format=%s", sha)).group(1))
        for line in git(root, "show", "--name-status", "--format=", "--no-renames", sha).splitlines():
            status, path = line.split("\t", 1)
            path = path.strip('"')
            paths.add(path)
            (added if status == "A" else changed).add(path)
    memory = ("Memory/Facts/", "Memory/Preferences/", "Memory/Events/", "Memory/Procedures/")
    return {"commits": len(shas), "paths": paths, "subjects_new": new,
            "memory_added": {p for p in added if p.startswith(memory)},
            "memory_changed": {p for p in changed - added if p.startswith(memory)}}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50_000)
    parser.add_argument("--per-session", type=int, default=150)
    parser.add_argument("--flat-mb", type=float, default=100.0, help="allowed growth of RSS over the run")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="vaultmem-big-"))
    work.mkdir(parents=True, exist_ok=True)
    transcript = write_transcript(work / "big.jsonl", args.turns, args.per_session)
    vault = work / "vault"
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env.pop("VAULTMEM_VAULT", None)
    subprocess.run([*VAULTMEM, "init", str(vault)], check=True, capture_output=True, env=env)
    print(f"extracting {args.turns:,} turns ({transcript.stat().st_size / 1e6:.1f} MB) in {vault}", file=sys.stderr)
    err_path = work / "stderr.txt"
    started = time.monotonic()
    with open(err_path, "w") as err:  # stderr a file: progress comes as occasional plain lines
        proc = subprocess.Popen([*VAULTMEM, "--vault", str(vault), "extract", str(transcript)],
                                stdout=subprocess.PIPE, stderr=err, env=env, text=True)
        reader, samples = _Reader(proc.stdout), []
        while proc.poll() is None:
            rss = rss_mb(proc.pid)
            if rss:
                samples.append((time.monotonic() - started, rss))
            time.sleep(0.5)
        out = reader.text()
    seconds = time.monotonic() - started
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    summary = _summary(out)
    peak = max((rss for _t, rss in samples), default=0.0)
    # flat: the second half's peak against the second quarter's (the first is loading the model)
    quarter, half = len(samples) // 4, len(samples) // 2
    early = max((rss for _t, rss in samples[quarter:half]), default=0.0)
    late = max((rss for _t, rss in samples[half:]), default=0.0)
    result = {"turns": args.turns, "exit_code": proc.returncode, "seconds": round(seconds, 1),
              "turns_per_second": round(args.turns / seconds, 1) if seconds else None,
              "peak_rss_mb": round(peak, 1), "rss_second_quarter_peak_mb": round(early, 1),
              "rss_second_half_peak_mb": round(late, 1),
              "rss_flat": bool(samples) and late - early <= args.flat_mb,
              "progress_lines": len(re.findall(r"^extract: session", stderr, re.M)),
              "last_progress_line": (re.findall(r"^extract: session.*$", stderr, re.M) or [None])[-1],
              **{k: summary.get(k) for k in ("sessions", "created", "updated", "superseded", "notes")}}
    if summary:
        held = committed(vault, summary["run"])
        result["commits"] = held["commits"]
        result["summary_equals_commits"] = _summary_matches(vault, summary, held)
    else:
        result["error"] = stderr.strip().splitlines()[-1:] or "no output"
    return result


def _summary(out: str) -> dict:
    """The counts of `vaultmem extract`'s printed summary."""
    head = re.search(r"^run (\S+): (\d+) session\(s\)[^;]*; (\d+) created, (\d+) updated, (\d+) superseded",
                     out, re.M)
    notes = re.search(r"^wrote (\d+) note\(s\)", out, re.M)
    if not head or not notes:
        return {}
    run, *counts = head.groups()
    return dict(zip(("sessions", "created", "updated", "superseded"), map(int, counts)), run=run,
                notes=int(notes.group(1)))


def _superseded(path: Path) -> bool:
    from vaultmem.store.properties import read_head

    return path.is_file() and read_head(path).get("status") == "superseded"


def _summary_matches(vault: Path, report: dict, held: dict) -> bool:
    """The summary's counts against the commits: every path, the memory notes added, and the
    ones changed (updated, or superseded) beside those the run superseded after adding them."""
    superseded_new = sum(_superseded(vault / p) for p in held["memory_added"])
    superseded_old = sum(_superseded(vault / p) for p in held["memory_changed"])
    return (report["notes"] == len(held["paths"])
            and report["created"] == len(held["memory_added"]) == held["subjects_new"]
            and report["superseded"] == superseded_new + superseded_old
            and report["updated"] + superseded_old == len(held["memory_changed"]))


class _Reader:
    """Reads a pipe on a thread, so a big --json report never blocks the child."""

    def __init__(self, pipe):
        import threading

        self.chunks = []
        self.thread = threading.Thread(target=lambda: self.chunks.append(pipe.read()), daemon=True)
        self.thread.start()

    def text(self) -> str:
        self.thread.join()
        return "".join(self.chunks)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    figures = main()
    print(json.dumps(figures))
