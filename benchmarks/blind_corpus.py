"""Blind memory-quality corpora (issue 32): check a batch's CASE files and split it in halves.

    python benchmarks/blind_corpus.py check benchmarks/data/blind/batch1/tune
    python benchmarks/blind_corpus.py split DIR      # DIR/<writer>/*.json -> DIR/tune, DIR/heldout

A batch is written by helpers who never read the extractor, from the brief in
`benchmarks/data/blind/BRIEF.md` (SPEC §7 CASE files plus `lang`, `family`, `style`). `split`
puts every other case of each language, in the order of a hash of its name, in `tune/` (read
while tuning) and the rest in `heldout/` (never read: scored with `memquality.py
--summary-only`). `check` enforces what the harness needs: every probe string in some turn,
a `stale` string never in a turn that states the new value, `as_of` dates at least 5 days
from every turn, secrets of 4 characters or more that no other probe expects.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path

KINDS = {"memory", "no_memory", "current", "as_of", "secret"}
TYPES = {"fact", "preference", "event", "procedure"}


def turns_of(path: Path) -> list[dict]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            turn = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name} line {n}: not JSON ({exc})") from None
        for key in ("session", "id", "time", "role", "text"):
            if key not in turn:
                raise ValueError(f"{path.name} line {n}: missing {key}")
        if turn["role"] not in ("user", "assistant"):
            raise ValueError(f"{path.name} line {n}: role must be user or assistant")
        datetime.fromisoformat(turn["time"])
        if not re.fullmatch(r"[A-Za-z0-9-]+", turn["id"]):
            raise ValueError(f"{path.name} line {n}: id must be [A-Za-z0-9-]+")
        out.append(turn)
    return out


def problems_of(path: Path) -> list[str]:
    """What is wrong with one CASE file ([] when nothing)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    name = data.get("name", path.stem)
    problems = [f"{name}: missing key {key}" for key in ("name", "now", "user", "transcripts", "probes", "lang")
                if key not in data]
    if data.get("lang") not in ("en", "zh", "mixed"):
        problems.append(f"{name}: lang must be en, zh or mixed")
    turns = []
    for transcript in data.get("transcripts", []):
        source = path.parent / transcript["path"]
        if transcript.get("format") != "jsonl" or not source.exists():
            problems.append(f"{name}: transcript {source.name} missing or not jsonl")
            continue
        try:
            turns += turns_of(source)
        except ValueError as exc:
            problems.append(f"{name}: {exc}")
    ids = [t["id"] for t in turns]
    if len(set(ids)) != len(ids):
        problems.append(f"{name}: message ids repeat")
    now = datetime.fromisoformat(data["now"])
    if any(datetime.fromisoformat(t["time"]) > now for t in turns):
        problems.append(f"{name}: a turn is later than now")
    if len({t["session"] for t in turns}) < 2:
        problems.append(f"{name}: needs at least 2 sessions")

    def holders(text):
        return [t for t in turns if text.lower() in t["text"].lower()]

    seen = set()
    for probe in data.get("probes", []):
        pid, kind = probe.get("id"), probe.get("kind")
        if pid in seen:
            problems.append(f"{name}: probe id {pid} repeats")
        seen.add(pid)
        if kind not in KINDS:
            problems.append(f"{name}: {pid}: unknown kind {kind}")
            continue
        for text in probe.get("expect", []) + probe.get("stale", []) + ([probe["text"]] if "text" in probe else []):
            if not holders(text):
                problems.append(f"{name}: {pid}: {text!r} occurs in no turn")
        if kind in ("memory", "current", "as_of") and not probe.get("expect"):
            problems.append(f"{name}: {pid}: needs expect")
        if kind in ("current", "as_of") and not probe.get("question"):
            problems.append(f"{name}: {pid}: needs question")
        if kind == "memory" and probe.get("type") and probe["type"] not in TYPES:
            problems.append(f"{name}: {pid}: bad type")
        if kind in ("no_memory", "secret") and not probe.get("text"):
            problems.append(f"{name}: {pid}: needs text")
        if kind == "current":
            if "stale" not in probe:
                problems.append(f"{name}: {pid}: current needs stale")
            for stale in probe.get("stale", []):
                for expect in probe["expect"]:
                    if [t for t in holders(stale) if expect.lower() in t["text"].lower()]:
                        problems.append(f"{name}: {pid}: stale {stale!r} and expect {expect!r} share a turn")
                    if stale.lower() in expect.lower() or expect.lower() in stale.lower():
                        problems.append(f"{name}: {pid}: stale {stale!r} overlaps expect {expect!r}")
        if kind == "as_of":
            when = datetime.fromisoformat(probe["as_of"])
            for expect in probe["expect"]:
                first = min((datetime.fromisoformat(t["time"]) for t in holders(expect)), default=None)
                if first and first > when - timedelta(days=5):
                    problems.append(f"{name}: {pid}: {expect!r} first said less than 5 days before as_of")
            if [t for t in turns if abs(datetime.fromisoformat(t["time"]) - when) < timedelta(days=5)]:
                problems.append(f"{name}: {pid}: a turn lies within 5 days of as_of")
        if kind == "secret":
            if len(probe["text"]) < 4:
                problems.append(f"{name}: {pid}: secret shorter than 4 characters")
            for other in data["probes"]:
                if other is probe:
                    continue
                strings = other.get("expect", []) + other.get("stale", [])
                strings += [other["text"]] if other.get("kind") != "secret" and "text" in other else []
                if any(probe["text"].lower() in s.lower() or s.lower() in probe["text"].lower() for s in strings):
                    problems.append(f"{name}: {pid}: secret overlaps probe {other.get('id')}")
    return problems


def check(folder: Path) -> list[str]:
    paths = sorted(folder.rglob("*.json"))
    problems = [p for path in paths for p in problems_of(path)]
    names = [json.loads(p.read_text(encoding="utf-8"))["name"] for p in paths]
    if len(set(names)) != len(names):
        problems.append("case names repeat")
    return problems


def split(batch: Path) -> dict:
    """DIR/<writer>/*.json -> DIR/tune and DIR/heldout: within each language, cases in the
    order of sha256(name), alternately."""
    halves = {h: batch / h for h in ("tune", "heldout")}
    for folder in halves.values():
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "transcripts").mkdir(parents=True)
    cases = []
    for path in sorted(batch.glob("*/*.json")):
        if path.parent.name in halves:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.append((data["lang"], hashlib.sha256(data["name"].encode()).hexdigest(), path, data))
    counts: dict = {}
    for lang in sorted({c[0] for c in cases}):
        for i, (_lang, _digest, path, data) in enumerate(sorted((c for c in cases if c[0] == lang),
                                                                key=lambda c: c[1])):
            half = "tune" if i % 2 == 0 else "heldout"
            counts[f"{half}/{lang}"] = counts.get(f"{half}/{lang}", 0) + 1
            for transcript in data["transcripts"]:
                source = path.parent / transcript["path"]
                shutil.copy(source, halves[half] / "transcripts" / source.name)
                transcript["path"] = f"transcripts/{source.name}"
            (halves[half] / path.name).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return counts


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2 or argv[0] not in ("check", "split"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if argv[0] == "split":
        print(json.dumps(split(Path(argv[1]))))
        return 0
    problems = check(Path(argv[1]))
    for line in problems:
        print(line)
    print(f"{len(list(Path(argv[1]).rglob('*.json')))} cases, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
