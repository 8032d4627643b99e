"""`add` through the write policy (api.Memory.add, `vaultmem add`) on a copy of the sample
vault: created, duplicate -> updated, contradiction -> superseded, noise and secrets
rejected with nothing written, and a user's edit surviving an update."""

import json
import shutil
import subprocess
from datetime import date, datetime

import pytest
from click.testing import CliRunner
from conftest import copy_sample_vault

from vaultmem import api
from vaultmem.cli import cli
from vaultmem.store.note import read_note
from vaultmem.store.values import as_list, link_target

LISBON = "Memory/Facts/Lives in Lisbon.md"


@pytest.fixture(scope="module")
def template(tmp_path_factory, embedder):
    """The sample vault, initialised and indexed once; each test works on a copy of it."""
    root = copy_sample_vault(tmp_path_factory.mktemp("template") / "vault")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VAULTMEM_NOW", "2026-11-30T10:00:00")
        api.init(root)
        mem = api.Memory(root, embedder=embedder)
        mem.reindex()
    return root


@pytest.fixture
def memory(template, tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-01T10:00:00")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    root = tmp_path / "vault"
    shutil.copytree(template, root, symlinks=True)
    mem = api.Memory(root, embedder=embedder)
    return mem


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def commits(root) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def vault_files(root) -> dict:
    return {p: p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not {".git", ".vaultmem"} & set(p.relative_to(root).parts)}


def targets(note, key) -> list[str]:
    return [str(link_target(v)) for v in as_list(note.get(key))]


def test_created_then_duplicates_update_the_same_note(memory, monkeypatch):
    root = memory.vault.root
    first = memory.add("The user drinks green tea every morning", type="preference", importance=0.4)
    assert first["action"] == "created" and first["reason"] == "new memory"
    path = root / first["path"]
    assert path.parent.name == "Preferences" and read_note(path).id == first["id"]
    assert commits(root) == 2 and "vaultmem: add preference" in git(root, "log", "-1", "--format=%s")

    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-02T08:00:00")
    again = memory.add("The user drinks green tea every morning.", type="preference", importance=0.7)
    monkeypatch.setenv("VAULTMEM_NOW", "2026-12-03T08:00:00")
    near = memory.add("Every morning the user drinks green tea", type="preference", importance=0.5)
    assert again["action"] == near["action"] == "updated"
    assert again["id"] == near["id"] == first["id"] and near["path"] == first["path"]
    assert "near-duplicate" in near["reason"]
    assert [p.name for p in (root / "Memory" / "Preferences").glob("*green tea*")] == [path.name]
    note = read_note(path)
    assert float(note.get("importance")) == 0.7  # the max of 0.4, 0.7 and 0.5
    assert note.get("updated") == datetime(2026, 12, 3, 8) and note.get("created") == datetime(2026, 12, 1, 10)
    assert note.statement() == "The user drinks green tea every morning"
    assert commits(root) == 4


def test_contradiction_supersedes_the_sample_home_and_keeps_it(memory):
    root = memory.vault.root
    result = memory.add("The user lives in Porto", type="fact")
    assert result["action"] == "superseded"
    assert "Lisbon -> Porto" in result["reason"]
    old, new = read_note(root / LISBON), read_note(root / result["path"])
    assert (old.status, old.get("valid_to"), targets(old, "superseded_by")) == \
        ("superseded", date(2026, 12, 1), [new.path.stem])
    assert (new.status, new.get("valid_from"), targets(new, "supersedes")) == \
        ("active", date(2026, 12, 1), ["Lives in Lisbon"])
    assert old.statement() == "The user lives in Lisbon, Portugal."
    assert (root / "Memory" / "Entities" / "Porto.md").exists()
    changed = set(git(root, "show", "--name-only", "--format=", "HEAD").splitlines())
    assert {LISBON, result["path"], "Memory/Entities/Porto.md"} == changed
    # said again: the same slot and value restates the new home, nothing is superseded twice
    assert memory.add("User lives in Porto.", type="fact")["action"] == "updated"
    assert read_note(root / LISBON).status == "superseded"


@pytest.mark.parametrize("text, reason", [
    ("Good morning!", "greeting"),
    ("My password is Tr0ub4dor&3, remember it", "secret"),
    ("The user's card is 4111 1111 1111 1111", "secret"),
])
def test_greetings_and_secrets_are_rejected_and_nothing_is_written(memory, text, reason):
    root = memory.vault.root
    before, head = vault_files(root), git(root, "rev-parse", "HEAD")
    result = memory.add(text, type="fact")
    assert result["action"] == "rejected" and reason in result["reason"]
    assert result["path"] is None and result["id"] is None
    assert vault_files(root) == before and git(root, "rev-parse", "HEAD") == head


def test_a_user_edit_survives_an_update(memory):
    root = memory.vault.root
    path = root / LISBON
    text = path.read_text(encoding="utf-8").replace("importance: 0.9", "importance: 1.0")
    path.write_text(text + "We live near the river; ask before suggesting moves.\n", encoding="utf-8")
    result = memory.add("User lives in Lisbon.", type="fact", importance=0.5)
    assert result["action"] == "updated" and result["path"] == LISBON
    note = read_note(path)
    assert note.body.endswith("The user lives in Lisbon, Portugal.\nWe live near the river; ask before "
                              "suggesting moves.\n")
    assert float(note.get("importance")) == 1.0
    assert note.get("updated") == datetime(2026, 12, 1, 10)


def test_an_edit_between_reading_the_pool_and_writing_wins(memory, monkeypatch):
    from vaultmem.memory import write

    root = memory.vault.root
    path = root / LISBON
    real_load_pool = write.load_pool

    def user_edits_meanwhile(*args, **kwargs):
        pool = real_load_pool(*args, **kwargs)
        path.write_text(path.read_text(encoding="utf-8").replace("Portugal.", "Portugal (Alfama)."),
                        encoding="utf-8")
        return pool

    monkeypatch.setattr(write, "load_pool", user_edits_meanwhile)
    result = memory.add("The user lives in Lisbon, Portugal.", type="fact")
    assert result["action"] == "updated"
    assert read_note(path).statement() == "The user lives in Lisbon, Portugal (Alfama)."


def test_a_note_deleted_meanwhile_makes_the_duplicate_a_new_note(memory, monkeypatch):
    from vaultmem.memory import write

    root = memory.vault.root
    real_load_pool = write.load_pool

    def user_deletes_meanwhile(*args, **kwargs):
        pool = real_load_pool(*args, **kwargs)
        (root / LISBON).unlink()
        return pool

    monkeypatch.setattr(write, "load_pool", user_deletes_meanwhile)
    result = memory.add("The user lives in Lisbon, Portugal.", type="fact")
    assert result["action"] == "created" and "gone" in result["reason"]
    assert read_note(root / result["path"]).statement() == "The user lives in Lisbon, Portugal."


def test_the_pool_reuses_a_notes_reading_until_the_file_changes(memory, monkeypatch):
    # A cold `add` stats the memory notes and parses only those changed since last read.
    import os

    from vaultmem.index import readings
    from vaultmem.memory import write

    root, state = memory.vault.root, memory.indexer.state
    old = 1_700_000_000_000_000_000   # mtimes past the racy window: readings are kept
    for path in (root / "Memory").rglob("*.md"):
        os.utime(path, ns=(old, old))
    first = write.load_pool(memory.vault, "default", state=state)
    real, read = readings._pool_fields, []
    monkeypatch.setattr(readings, "_pool_fields", lambda path: read.append(path.name) or real(path))

    again = write.load_pool(memory.vault, "default", state=state)
    assert read == []
    assert [(e.rel, e.text, e.subject, e.sources) for e in again.entries] == \
        [(e.rel, e.text, e.subject, e.sources) for e in first.entries]

    path = root / LISBON
    path.write_text(path.read_text(encoding="utf-8").replace("Portugal.", "Portugal (Alfama)."), encoding="utf-8")
    (root / "Memory/Facts/Partner is Mei.md").unlink()
    edited = write.load_pool(memory.vault, "default", state=state)
    assert read == ["Lives in Lisbon.md"]
    texts = {e.rel: e.text for e in edited.entries}
    assert texts[LISBON] == "The user lives in Lisbon, Portugal (Alfama)."
    assert "Memory/Facts/Partner is Mei.md" not in texts
    assert "Memory/Facts/Partner is Mei.md" not in state.memory_fields()
    assert LISBON not in state.memory_fields()   # just written: read again until it is older


def test_an_index_leaves_the_notes_readings_for_the_first_cold_add(memory, monkeypatch):
    """The indexer reads every memory note it indexes; it keeps each one's reading for the
    write policy, so the first `add` after a reindex parses no note (it had to read them
    all), and the readings are the ones the policy would have made itself."""
    import os

    from vaultmem.index import readings
    from vaultmem.memory import write

    root, state = memory.vault.root, memory.indexer.state
    old = 1_700_000_000_000_000_000   # past the racy window
    for path in (root / "Memory").rglob("*.md"):
        os.utime(path, ns=(old, old))
    state.put_memory_fields([], gone=list(state.memory_fields()))
    memory.reindex()
    kept = state.memory_fields()
    assert LISBON in kept and "Memory/Facts/Partner is Mei.md" in kept
    assert not any("/Sessions/" in rel or "/Entities/" in rel for rel in kept)
    real, read = readings._pool_fields, []
    monkeypatch.setattr(readings, "_pool_fields", lambda path: read.append(path.name) or real(path))
    pool = write.load_pool(memory.vault, "default", state=state)
    assert read == [] and pool.entries
    state.put_memory_fields([], gone=list(kept))
    fresh = write.load_pool(memory.vault, "default", state=state)
    assert len(read) == len(kept)
    assert [(e.rel, e.text, e.subject, e.attribute, e.value, e.sources, e.source_messages) for e in pool.entries] == \
        [(e.rel, e.text, e.subject, e.attribute, e.value, e.sources, e.source_messages) for e in fresh.entries]


def test_cli_add_json_shape(memory, embedder, monkeypatch):
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    runner, root = CliRunner(), str(memory.vault.root)
    created = runner.invoke(cli, ["--vault", root, "add", "The user plays the cello on Sundays",
                                  "--type", "preference", "--json"])
    assert created.exit_code == 0, created.output
    data = json.loads(created.stdout)
    assert set(data) == {"action", "id", "path", "reason", "nearest"} and data["action"] == "created"
    assert data["path"].startswith("Memory/Preferences/") and len(data["id"]) == 26
    moved = runner.invoke(cli, ["--vault", root, "add", "The user lives in Porto", "--json"])
    data = json.loads(moved.stdout)
    assert (data["action"], data["superseded"]) == ("superseded", LISBON)
    assert LISBON not in {n["path"] for n in data["nearest"]}   # superseded now: named, not "near"
    rejected = runner.invoke(cli, ["--vault", root, "add", "thanks so much", "--json"])
    data = json.loads(rejected.stdout)
    assert set(data) == {"action", "id", "path", "reason", "nearest"}
    assert (data["action"], data["path"]) == ("rejected", None) and "greeting" in data["reason"]


def test_cli_add_shows_the_nearest_held_memories(memory, embedder, monkeypatch):
    """An agent sees what it holds nearest to a new statement, to notice it should have updated
    one: the sample's coffee memory for another coffee statement, best first, with its text."""
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    runner, root = CliRunner(), str(memory.vault.root)
    added = runner.invoke(cli, ["--vault", root, "add", "The user drinks two espressos every day",
                                "--type", "preference", "--json"])
    assert added.exit_code == 0, added.output
    data = json.loads(added.stdout)
    assert data["action"] == "created"
    nearest = data["nearest"]
    assert 1 <= len(nearest) <= 3 and all(set(n) == {"id", "path", "text", "score"} for n in nearest)
    assert nearest[0]["path"] == "Memory/Preferences/Cutting back on coffee.md"
    assert nearest[0]["text"].startswith("The user is cutting back on coffee")
    assert nearest[0]["id"] == read_note(memory.vault.root / nearest[0]["path"]).id
    assert [n["score"] for n in nearest] == sorted((n["score"] for n in nearest), reverse=True)
    assert data["path"] not in {n["path"] for n in nearest}
    again = runner.invoke(cli, ["--vault", root, "add", "The user drinks two espressos every day",
                                "--type", "preference"])
    assert again.exit_code == 0, again.output
    lines = again.stdout.splitlines()
    assert lines[0] == f"updated: {data['path']}" and "  nearest held memories:" in lines
    assert any("Memory/Preferences/Cutting back on coffee.md  The user is cutting back" in line
               for line in lines)
    listed = [line for line in lines if line.startswith("    ")]
    assert listed and not any(data["path"] in line for line in listed)   # the note itself is not "near"
