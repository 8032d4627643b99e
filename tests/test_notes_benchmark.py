"""Smoke run of benchmarks/notes.py on tests/data/user_vault: the person's own notes are
indexed read-only, every in-scope note is in the index, and the questions find their note."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USER_VAULT = ROOT / "tests" / "data" / "user_vault"
# What Obsidian or vaultmem leave out of the person's notes in this vault: its config folder,
# its trash, the Excluded files of .obsidian/app.json and its attachment folder.
OUT_OF_SCOPE = {".obsidian", ".trash", "Templates", "Attachments"}

sys.path.insert(0, str(ROOT / "benchmarks"))


def in_scope_notes() -> list[str]:
    return sorted(p.relative_to(USER_VAULT).as_posix() for p in USER_VAULT.rglob("*.md")
                  if p.relative_to(USER_VAULT).parts[0] not in OUT_OF_SCOPE)


def test_user_vault_is_what_the_questions_name():
    notes = set(in_scope_notes())
    questions = json.loads((ROOT / "tests" / "data" / "user_vault_questions.json").read_text("utf-8"))
    assert len(questions) == 20 and 30 <= len(notes) <= 40
    assert all(set(q["notes"]) <= notes for q in questions)


def test_notes_benchmark_on_the_user_vault(embedder, capsys, monkeypatch):
    from notes import main

    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    before = {p: p.read_bytes() for p in USER_VAULT.rglob("*") if p.is_file()}
    main(["--model", embedder.name], embedder=embedder)
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])

    assert {"questions", "hit@1", "hit@3", "hit@10", "mrr", "notes_indexed", "files_unchanged",
            "changed_files", "model", "per_question"} <= figures.keys()
    assert figures["questions"] == 20 and len(figures["per_question"]) == 20
    assert all({"question", "rank", "first_hit", "notes"} <= q.keys() for q in figures["per_question"])
    assert figures["files_unchanged"] is True and figures["changed_files"] == []
    assert figures["notes_indexed"] == len(in_scope_notes())
    assert figures["hit@1"] <= figures["hit@3"] <= figures["hit@10"] <= 1
    assert figures["hit@3"] >= 0.8
    # The original vault is never touched: the harness works on a copy.
    assert {p: p.read_bytes() for p in USER_VAULT.rglob("*") if p.is_file()} == before
