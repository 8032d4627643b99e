"""sample_vault/: the demo vault is itself a set of valid memory notes (SPEC §2, §3)."""

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from vaultmem.store.layout import MEMORY_TYPES, TYPE_FOLDERS
from vaultmem.store.note import read_note, render_note
from vaultmem.store.values import as_list, link_target, validate_memory
from vaultmem.store.vault import Vault

SAMPLE = Path(__file__).resolve().parent.parent / "sample_vault"
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def notes():
    vault = Vault(SAMPLE)
    return {path: read_note(path) for path in vault.iter_notes()}


def test_every_memory_note_parses_and_validates(notes):
    problems = {str(p.relative_to(SAMPLE)): validate_memory(n) for p, n in notes.items()}
    assert {path: found for path, found in problems.items() if found} == {}


def test_every_note_round_trips_byte_for_byte(notes):
    for path, note in notes.items():
        assert render_note(note) == path.read_text(encoding="utf-8"), path


def test_about_twenty_memories_across_all_types(notes):
    types = Counter(note.type for note in notes.values())
    assert set(MEMORY_TYPES) <= set(types), types
    assert 18 <= sum(types[t] for t in MEMORY_TYPES) <= 30, types


def test_each_note_sits_in_its_types_folder_and_ids_are_unique(notes):
    for path, note in notes.items():
        assert path.parent.name == TYPE_FOLDERS[note.type] or path.parent.name == "Archive", path
    ids = [note.id for note in notes.values()]
    assert len(ids) == len(set(ids))


def test_at_least_two_notes_are_in_chinese(notes):
    chinese = [p for p, n in notes.items() if HAN.search(n.body) and HAN.search(p.stem)]
    assert len(chinese) >= 2, chinese


def test_a_superseded_memory_links_to_its_successor_both_ways(notes):
    by_title = {path.stem: note for path, note in notes.items()}
    superseded = [(p, n) for p, n in notes.items() if n.status == "superseded"]
    assert superseded, "no superseded memory in the sample vault"
    for path, old in superseded:
        successors = [link_target(v) for v in as_list(old.get("superseded_by"))]
        assert successors, f"{path.name} is superseded but names no successor"
        for title in successors:
            successor = by_title[title]
            assert successor.status == "active"
            assert path.stem in [link_target(v) for v in as_list(successor.get("supersedes"))]


def test_the_sample_vault_is_a_real_obsidian_vault_with_user_notes():
    assert (SAMPLE / ".obsidian").is_dir()
    own_notes = [p for p in SAMPLE.rglob("*.md") if "Memory" not in p.parts]
    assert own_notes, "the sample should show that the user's own notes are left alone"


def test_the_cli_lists_the_sample_vault_without_errors(tmp_path):
    """The demo vault as a user would point the CLI at it (a copy: the sample stays clean)."""
    import json

    from click.testing import CliRunner

    from vaultmem.cli import cli

    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    result = CliRunner().invoke(cli, ["--vault", str(root), "list", "--json"])
    assert result.exit_code == 0, result.output
    listing = json.loads(result.stdout)
    assert listing["errors"] == []
    titles = {n["title"] for n in listing["notes"]}
    assert {"Cutting back on coffee", "最近在戒咖啡", "Likes oat milk in tea"} <= titles
    assert all(n["path"].startswith("Memory/") for n in listing["notes"])
