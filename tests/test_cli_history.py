"""The version commands end to end: real vault, real git, real index, CliRunner."""

import json
import subprocess

import pytest
from click.testing import CliRunner

from vaultmem import api
from vaultmem.cli import cli
from vaultmem.history import git as history
from vaultmem.memory.memories import write_memory
from vaultmem.store.vault import Vault


def git(root, *args):
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture(autouse=True)
def isolated_git(tmp_path, monkeypatch):
    config = tmp_path / "gitconfig"
    config.write_text("[user]\n\tname = Ada\n\temail = ada@example.org\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T09:00:00")


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "Diary.md").write_text("mine\n")
    git(root, "init", "-q")
    git(root, "add", "Diary.md")
    git(root, "commit", "-q", "-m", "my diary")
    (root / "Diary.md").write_text("mine, still typing\n")
    api.init(root)
    return Vault(root)


def invoke(vault, *args):
    result = CliRunner().invoke(cli, ["--vault", str(vault.root), *args])
    return result


def run_json(vault, *args):
    result = invoke(vault, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def add_memory(vault, text, run=None, **kw):
    path = write_memory(vault, text=text, type="fact", user="default", run=run, **kw)
    rel = vault.rel(path)
    history.commit(vault.root, [rel], f"vaultmem: add '{path.stem}'", "add", run=run)
    return rel


def test_history_diff_show_at_and_rollback(vault):
    rel = add_memory(vault, "The user lives in Beijing.")
    path = vault.root / rel
    path.write_text(path.read_text().replace("Beijing.", "Beijing, near the lake."))
    history.commit_user_edits(vault, [rel])

    versions = run_json(vault, "history", rel)["versions"]
    assert [(v["action"], v["author"]) for v in versions] == [("user-edit", "Ada"), ("add", "vaultmem")]
    first = versions[1]["short"]
    text = invoke(vault, "history", "The user lives in Beijing")  # by title
    assert text.exit_code == 0 and "user-edit" in text.output and "add" in text.output

    assert "+The user lives in Beijing, near the lake." in invoke(vault, "diff", rel).output
    assert "-The user lives in Beijing.\n+The user lives in Beijing, near the lake." in \
        run_json(vault, "diff", rel, first)["diff"]
    old = run_json(vault, "show", rel, "--at", first)
    assert old["body"] == "The user lives in Beijing.\n" and old["rev"] == first

    done = run_json(vault, "rollback", rel, "--to", first)
    assert done["restored"] == [rel] and done["commit"]
    assert "near the lake" not in path.read_text()
    indexed = api.Memory(vault.root).indexer.index.path_hashes()
    assert rel in indexed  # the index followed the restore
    assert run_json(vault, "history", rel)["versions"][0]["action"] == "rollback"
    assert git(vault.root, "diff", "--name-only").split() == ["Diary.md"]


def test_rollback_run_reactivates_the_superseded_memory(vault):
    from vaultmem.memory.memories import update_note

    old = add_memory(vault, "The user lives in Beijing.", run="run-1")
    new = vault.rel(write_memory(vault, text="The user lives in Shanghai.", type="fact", user="default",
                                 run="run-2"))
    update_note(vault, vault.root / old, {"status": "superseded"})
    history.commit(vault.root, [new, old], "vaultmem: supersede 'Lives in Beijing' by 'Lives in Shanghai'",
                   "supersede", run="run-2")

    result = invoke(vault, "rollback", "--run", "run-2")
    assert result.exit_code == 0, result.output
    assert f"removed  {new}" in result.output and f"restored {old}" in result.output
    assert "status: active" in (vault.root / old).read_text()
    assert not (vault.root / new).exists()
    assert run_json(vault, "history", new)["versions"][0]["change"] == "D"  # still in history


def test_forget_archives_then_purge_erases(vault):
    rel = add_memory(vault, "The user's PIN hint is a blue heron.")
    archived = run_json(vault, "forget", rel)
    assert archived["note"].startswith("Memory/Archive/") and archived["status"] == "archived"
    assert "status: archived" in (vault.root / archived["note"]).read_text()
    assert not (vault.root / rel).exists()
    indexed = api.Memory(vault.root).indexer.index.path_hashes()
    assert archived["note"] in indexed and rel not in indexed

    receipt = invoke(vault, "forget", archived["note"], "--purge")
    assert receipt.exit_code == 0, receipt.output
    assert "Rewrote" in receipt.output and "->" in receipt.output
    assert "blue heron" not in git(vault.root, "log", "-p", "--all")
    assert not (vault.root / archived["note"]).exists()
    assert archived["note"] not in api.Memory(vault.root).indexer.index.path_hashes()
    assert (vault.root / "Diary.md").read_text() == "mine, still typing\n"


def test_errors_are_one_line_messages(vault):
    rel = add_memory(vault, "The user likes tea.")
    bad = invoke(vault, "rollback", rel, "--to", "no-such-rev")
    assert bad.exit_code == 1 and "unknown revision" in bad.output and "Traceback" not in bad.output
    usage = invoke(vault, "rollback", rel)
    assert usage.exit_code == 2 and "--to REV" in usage.output
    assert invoke(vault, "forget", rel, "--force").exit_code == 2
    missing = invoke(vault, "rollback", "--run", "run-nope")
    assert missing.exit_code == 1 and "run-nope" in missing.output
