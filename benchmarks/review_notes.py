"""Memory notes for a blind reader (issue 33): every case of a corpus through the default
offline `extract` into a fresh vault, as memquality.py does, and every active memory note
written out with the turn it was written from, shuffled, one JSON object per line:
`{"case", "lang", "note", "type", "valid_from", "title", "body", "source_turns"}`.

A reader who has not seen the extractor marks each note keep / fix / drop against
`benchmarks/data/blind/REVIEW.md`; `--score VERDICTS...` counts their verdicts
(`{"i", "lang", "verdict", "codes"}` per line) by language and code. Prints counts only, never
a note: the corpus may be a held-out half.

    python benchmarks/review_notes.py OUT.jsonl CASE.json...
    python benchmarks/review_notes.py --vaults KEPT OUT.jsonl CASE.json...   (memquality --keep-vaults KEPT)
    python benchmarks/review_notes.py --score VERDICTS.jsonl...
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from memquality import load_case  # noqa: E402
from vault_audit import read_notes  # noqa: E402

SEED = 33


def session_blocks(vault: Path) -> dict[tuple[str, str], str]:
    """(session note stem, block id) -> the turn's text, read from the session notes."""
    blocks = {}
    for path in sorted((vault / "Memory" / "Sessions").rglob("*.md")):
        text = re.sub(r"\A---\n.*?\n---\n", "", path.read_text(encoding="utf-8"), flags=re.S)
        for para in re.split(r"\n\s*\n", text):
            m = re.search(r"\^([\w-]+)\s*$", para.strip())
            if m:
                blocks[(path.stem, m.group(1))] = re.sub(r"\s*\^[\w-]+\s*$", "", para.strip())
    return blocks


def notes_of(case_path: Path, embedder=None) -> list[dict]:
    from vaultmem import api

    case = load_case(case_path)
    os.environ["VAULTMEM_NOW"] = case.now
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "v"
        with contextlib.redirect_stderr(io.StringIO()):
            api.init(vault, model="all-MiniLM-L6-v2")
            memory = api.Memory(vault, embedder=embedder, user=case.user)
            for transcript, fmt in case.transcripts:
                memory.extract([transcript], format=fmt, user=case.user)
        return rows_of(vault, case)


def rows_of(vault: Path, case) -> list[dict]:
    """The active memory notes of a case's vault, each with the turns it cites."""
    blocks = session_blocks(vault)
    notes, _ = read_notes(vault)
    rows = []
    for note in notes:
        if not note.is_active_memory:
            continue
        head = (vault / note.rel).read_text(encoding="utf-8").split("\n---", 1)[0]
        sources = re.findall(r"\[\[(?:[^\]]*/)?([^\]#/]+)#\^([\w-]+)\]\]", head)
        rows.append({"case": case.name, "lang": case.lang, "note": note.rel, "type": note.type,
                     "valid_from": str(note.valid_from or ""), "title": note.stem,
                     "body": note.body.strip(), "source_turns": [blocks.get(s, "") for s in sources]})
    return rows


def score(paths: list[Path]) -> dict:
    verdicts = [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
    by_lang: dict[str, Counter] = {}
    for v in verdicts:
        by_lang.setdefault(v.get("lang") or "?", Counter())[v["verdict"]] += 1
    total = Counter(v["verdict"] for v in verdicts)
    return {"notes": len(verdicts), "keep": total["keep"], "fix": total["fix"], "drop": total["drop"],
            "keep_rate": round(total["keep"] / max(len(verdicts), 1), 3),
            "by_lang": {lang: {**c, "keep_rate": round(c["keep"] / max(sum(c.values()), 1), 3)}
                        for lang, c in sorted(by_lang.items())},
            "codes": dict(Counter(code for v in verdicts for code in v.get("codes", [])).most_common())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--score", action="store_true", help="count the verdict files given")
    parser.add_argument("--vaults", type=Path, help="read each case's vault from VAULTS/<case> (as "
                        "memquality.py --keep-vaults left it, e.g. through the model) instead of "
                        "extracting offline")
    args = parser.parse_args(argv)
    if args.score:
        print(json.dumps(score(args.paths), ensure_ascii=False))
        return 0
    out, cases = args.paths[0], args.paths[1:]
    if not cases:
        parser.error("give the output file and at least one CASE.json")
    os.environ.setdefault("VAULTMEM_NO_DAEMON", "1")
    if args.vaults:
        rows = [row for path in cases for row in rows_of(args.vaults / load_case(path).name, load_case(path))]
    else:
        from vaultmem.index.embed import Embedder

        embedder = Embedder("all-MiniLM-L6-v2")
        rows = [row for case in cases for row in notes_of(case, embedder)]
    random.Random(SEED).shuffle(rows)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    langs = Counter(r["lang"] for r in rows)
    print(json.dumps({"notes": len(rows), "by_lang": dict(langs),
                      "without_source_turn": sum(1 for r in rows if not any(r["source_turns"]))}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
