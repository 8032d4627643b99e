"""The person's own notes: can vaultmem find the note that answers a question, read-only?

    python benchmarks/notes.py [--vault PATH] [--questions FILE] [--model M] [--scope notes|all] [--json OUT]

Copies the vault to a temporary folder (the original is never opened for writing), runs the
code `vaultmem init` and `vaultmem reindex` run (`vaultmem.api.init`, then
`Memory.reindex()`), checks that every file of the copy but what init creates (`.vaultmem/`,
the memory folder, `.git/`) is byte-identical afterwards (sha256), then asks
each question through `Memory.search(question, k=10, scope=...)`, the code `vaultmem search`
runs. A QUESTIONS file is a JSON list of `{"question": ..., "notes": [vault-relative paths]}`;
a question is answered at rank r when the r-th distinct note among the hits is one of its
notes (several chunks of one note count once). Figures: hit@1, hit@3, hit@10, MRR, the notes
indexed, seconds. Defaults: tests/data/user_vault and its questions. The last stdout line is
one JSON object; tables come before it, progress goes to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_VAULT = ROOT / "tests" / "data" / "user_vault"
DEFAULT_QUESTIONS = ROOT / "tests" / "data" / "user_vault_questions.json"
DEPTH = 10
CUTOFFS = (1, 3, 10)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT,
                        help="a vault of notes (copied, never changed)")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS,
                        help='JSON list of {"question", "notes": [paths relative to the vault]}')
    parser.add_argument("--model", help="the embedding model init writes (default: the one init picks)")
    parser.add_argument("--scope", choices=("notes", "all"), default="notes",
                        help="search scope (default notes)")
    parser.add_argument("--json", dest="json_out", type=Path, help="write the full report here")
    return parser.parse_args(argv)


def load_questions(path: Path) -> list[dict]:
    questions = json.loads(path.read_text(encoding="utf-8"))
    for n, q in enumerate(questions):
        if not isinstance(q.get("question"), str) or not q.get("notes"):
            raise SystemExit(f"{path}: question {n} needs a 'question' string and a 'notes' list")
    return questions


def fingerprint(root: Path, skip) -> dict[str, str]:
    """sha256 of every file under `root` (symlinks by their target text) but those `skip` takes."""
    prints = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if not skip((rel_dir / d).as_posix() + "/"))
        for name in sorted(filenames):
            rel = (rel_dir / name).as_posix()
            if skip(rel):
                continue
            path = Path(dirpath) / name
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            prints[rel] = hashlib.sha256(data).hexdigest()
    return prints


def created_by_init(memory_root: str):
    """Whether a vault path (a folder ends in `/`) is one `vaultmem init` creates or changes."""
    owned = (".vaultmem/", ".git/", memory_root.strip("/") + "/")

    def skip(rel: str) -> bool:
        return rel.startswith(owned)
    return skip


def rank_of(hits: list[dict], wanted: set[str]) -> tuple[int | None, list[str]]:
    """(1-based rank of the first wanted note among the distinct notes hit, those notes)."""
    notes = list(dict.fromkeys(h["path"] for h in hits))
    rank = next((n for n, path in enumerate(notes, 1) if path in wanted), None)
    return rank, notes


def summarise(results: list[dict]) -> dict:
    total = len(results) or 1
    figures = {f"hit@{k}": round(sum(1 for r in results if r["rank"] and r["rank"] <= k) / total, 3)
               for k in CUTOFFS}
    figures["mrr"] = round(sum(1 / r["rank"] for r in results if r["rank"]) / total, 3)
    return figures


def run(args: argparse.Namespace, embedder=None) -> dict:
    """The whole benchmark on a private copy of `args.vault`; returns the figures.
    `embedder`: an already loaded `vaultmem.index.embed.Embedder` to use (the tests' shared model)."""
    from vaultmem.api import Memory, init
    from vaultmem.index.embed import Embedder
    from vaultmem.store.config import load_config

    questions = load_questions(args.questions)
    seconds = {}
    with tempfile.TemporaryDirectory(prefix="vaultmem-notes-") as tmp:
        vault = Path(tmp) / "vault"
        # A copy without the source's own index or repository: a fresh init, as a new user's.
        shutil.copytree(args.vault, vault, symlinks=True, ignore=shutil.ignore_patterns(".vaultmem", ".git"))
        before = fingerprint(vault, lambda rel: False)
        started = time.perf_counter()
        init(vault, model=args.model or (embedder.name if embedder else None))
        seconds["init"] = time.perf_counter() - started
        config = load_config(vault)
        skip = created_by_init(config.memory_root)
        before = {rel: digest for rel, digest in before.items() if not skip(rel)}
        if embedder is None or embedder.name != config.model:
            started = time.perf_counter()
            embedder = Embedder(config.model, threads=config.embed_threads)
            seconds["model load"] = time.perf_counter() - started
        memory = Memory(vault, embedder=embedder)
        print(f"indexing {args.vault} with {embedder.name}", file=sys.stderr, flush=True)
        started = time.perf_counter()
        report = memory.reindex()
        seconds["reindex"] = time.perf_counter() - started
        # Counted from the index itself: the distinct notes that have chunks of type `note`.
        rows = memory.indexer.index.rows(columns=["path", "type"])
        notes_indexed = len({r["path"] for r in rows if r["type"] == "note"})
        results = []
        started = time.perf_counter()
        for n, q in enumerate(questions, 1):
            hits = memory.search(q["question"], k=DEPTH, scope=args.scope)["hits"]
            rank, notes = rank_of(hits, set(q["notes"]))
            results.append({"question": q["question"], "notes": q["notes"], "rank": rank,
                            "first_hit": notes[0] if notes else None, "hits": notes})
            print(f"[{n}/{len(questions)}] rank {rank or '-'}: {q['question']}", file=sys.stderr, flush=True)
        seconds["queries"] = time.perf_counter() - started
        after = fingerprint(vault, skip)
    changed = sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))
    return {"questions": len(results), **summarise(results), "notes_indexed": notes_indexed,
            "chunks": report.get("chunks"), "index_errors": report.get("errors", []),
            "files_unchanged": not changed, "changed_files": changed, "model": embedder.name,
            "scope": args.scope, "seconds": {k: round(v, 2) for k, v in seconds.items()},
            "per_question": [{k: r[k] for k in ("question", "rank", "first_hit", "notes")} for r in results],
            "_results": results}


def print_report(figures: dict) -> None:
    print(f"{'rank':>4}  {'first hit':<48}  question")
    for r in figures["per_question"]:
        mark = r["rank"] or "-"
        print(f"{mark:>4}  {(r['first_hit'] or '')[:48]:<48}  {r['question']}")
    print()
    print(f"questions {figures['questions']}  hit@1 {figures['hit@1']:.3f}  hit@3 {figures['hit@3']:.3f}  "
          f"hit@10 {figures['hit@10']:.3f}  MRR {figures['mrr']:.3f}")
    print(f"notes indexed {figures['notes_indexed']} ({figures['chunks']} chunks), model {figures['model']}, "
          f"scope {figures['scope']}, vault files unchanged: {figures['files_unchanged']}")
    print("seconds: " + ", ".join(f"{stage} {s:.2f}" for stage, s in figures["seconds"].items()))
    for rel in figures["changed_files"]:
        print(f"CHANGED by init/reindex: {rel}")


def main(argv=None, embedder=None) -> dict:
    args = parse_args(argv)
    figures = run(args, embedder=embedder)
    results = figures.pop("_results")
    if args.json_out:
        report = dict(figures, per_question=results)
        args.json_out.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print_report(figures)
    print(json.dumps(figures, ensure_ascii=False))
    return figures


if __name__ == "__main__":
    sys.exit(0 if main()["files_unchanged"] else 1)
