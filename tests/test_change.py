"""The one change path (vaultmem/history/change.py): every command changes the vault the same way.

- A commit that fails (another git process holds `.git/index.lock`) is handled alike by
  add, correct, forget, rollback, gc and extract: the change stays on disk and indexed, the
  result's `warning` says so, and the daemon's chores later commit it as vaultmem's, under
  the command's own message, never as the user's edit.
- A change that fails part-way (a correction whose old note cannot be replaced) leaves the
  vault byte for byte as it was, without temp files, and says so in a plain sentence.
- The daemon's commits of the user's edits name exactly the notes changed and how.

Real vaults, git, LanceDB and the bundled model; the only fake is the chores' clock.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import api
from vaultmem.cli import cli
from vaultmem.daemon.chores import Chores
from vaultmem.daemon.worker import Gate
from vaultmem.history import git as history
from vaultmem.history.change import held_paths, vault_change
from vaultmem.store.note import read_note

HOLD_LOCK = str(Path(__file__).parent / "helpers" / "hold_index_lock.py")
WRITTEN = "2026-01-05T09:00:00"
LATER = "2026-03-01T09:00:00"    # 55 days on: gc archives the idle low-importance memory


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def vault_files(root) -> dict:
    """Every file but git's and vaultmem's state (temp files included), with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not {".git", ".vaultmem"} & set(p.relative_to(root).parts)}


def uncommitted(root) -> list[str]:
    out = git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", "Memory")
    return sorted(entry[3:] for entry in out.split("\0") if entry[3:])


def last_commit(root) -> tuple[str, str, str]:
    """(author, subject, Vaultmem-Action) of HEAD."""
    out = git(root, "log", "-1", "--format=%an%x1f%s%x1f%(trailers:key=Vaultmem-Action,valueonly)")
    author, subject, action = out.split("\x1f")
    return author, subject, action.strip()


@pytest.fixture(scope="module")
def template(tmp_path_factory, embedder):
    """A vault holding: a memory to correct, one to forget, one with two versions (to roll
    back), one idle of low importance (for gc); and a transcript to extract."""
    base = tmp_path_factory.mktemp("change")
    root = base / "vault"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VAULTMEM_NOW", WRITTEN)
        mp.delenv("VAULTMEM_VAULT", raising=False)
        api.init(root)
        mem = api.Memory(root, embedder=embedder)
        info = {"lisbon": mem.add("The user lives in Lisbon.", type="fact")["path"],
                "tea": mem.add("The user prefers green tea.", type="preference")["path"],
                "bread": mem.add("The user bakes bread on Sundays.", type="fact")["path"],
                "knit": mem.add("The user once tried knitting.", type="fact", importance=0.2)["path"]}
        info["first"] = git(root, "rev-parse", "HEAD").strip()
        bread = root / info["bread"]
        bread.write_text(bread.read_text(encoding="utf-8") + "\nAnd on Wednesdays.\n", encoding="utf-8")
        history.commit_user_edits(root, [info["bread"]])
        mem.reindex()
    transcript = base / "chat.jsonl"
    transcript.write_text("".join(json.dumps({"session": "s-1", "id": f"m-{i}", "time": f"2026-02-0{i}T10:00:00",
                                              "speaker": "Alice", "role": "user", "text": text}) + "\n"
                                  for i, text in enumerate(["My name is Alice.", "I work as a carpenter."], 1)),
                          encoding="utf-8")
    return root, info, transcript


@pytest.fixture
def memory(template, tmp_path, embedder, monkeypatch):
    root, info, transcript = template
    monkeypatch.setenv("VAULTMEM_NOW", LATER)
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    copy = tmp_path / "vault"
    shutil.copytree(root, copy, symlinks=True)
    return api.Memory(copy, embedder=embedder), info, transcript


# command -> (what it does, the subject its commit starts with, its Vaultmem-Action)
COMMANDS = {
    "add": (lambda mem, info, t: mem.add("The user keeps bees in the garden.", type="fact"),
            "vaultmem: add fact 'The user keeps bees in the garden'", "created"),
    "correct": (lambda mem, info, t: mem.correct(info["lisbon"], "The user lives in Porto."),
                "vaultmem: correct 'The user lives in Lisbon' to 'The user lives in Porto'", "correct"),
    "forget": (lambda mem, info, t: mem.forget(info["tea"]),
               "vaultmem: forget 'The user prefers green tea' (archived)", "forget"),
    "rollback": (lambda mem, info, t: mem.rollback(info["bread"], to=info["first"]),
                 "vaultmem: roll back 'The user bakes bread on Sundays' to ", "rollback"),
    "gc": (lambda mem, info, t: mem.gc(), "vaultmem: archive 'The user once tried knitting' (gc:", "archive"),
    "extract": (lambda mem, info, t: mem.extract([t]), "vaultmem: extract 1 session(s) from chat.jsonl: ",
                "extract"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_commit_that_fails_is_kept_indexed_reported_and_committed_later_as_vaultmems(
        memory, monkeypatch, command):
    mem, info, transcript = memory
    root = mem.vault.root
    do, subject, action = COMMANDS[command]
    head, before = git(root, "rev-parse", "HEAD"), vault_files(root)
    monkeypatch.setenv("VAULTMEM_GIT_LOCK_TIMEOUT", "0.3")
    holder = subprocess.Popen([sys.executable, HOLD_LOCK, str(root / ".git" / "index.lock"), "300"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        result = do(mem, info, transcript)
    finally:
        holder.kill()
        holder.wait(10)
    (root / ".git" / "index.lock").unlink()  # the stand-in for obsidian-git is gone

    # The same report from every command: the change is kept, indexed, and said to be.
    warning = result["warning"]
    assert warning.startswith("git could not record this change (") and "index.lock is held by another git" \
        " process" in warning and "saved in the vault and indexed" in warning, warning
    assert git(root, "rev-parse", "HEAD") == head
    changed = uncommitted(root)
    assert changed and vault_files(root) != before
    indexed = mem.indexer.index.path_hashes()
    for rel in changed:
        assert (rel in indexed) == (root / rel).exists(), rel
    assert [p.suffix for p in (root / ".vaultmem" / "changes").iterdir()] == [".pending"]

    # The daemon's quiet-time commit takes it in as vaultmem's change, not the user's edit.
    clock = FakeClock()
    chores = Chores(mem, Gate(), clock=clock)
    chores.edited(changed)
    clock.now += chores.quiet
    chores.run_due()
    author, message, trailer = last_commit(root)
    assert (author, trailer) == ("vaultmem", action) and message.startswith(subject), message
    assert git(root, "rev-list", "--count", f"{head.strip()}..HEAD").strip() == "1"
    assert uncommitted(root) == []
    assert not list((root / ".vaultmem" / "changes").iterdir())
    names = git(root, "show", "--name-only", "--no-renames", "--format=", "HEAD").split("\n")
    assert sorted(filter(None, names)) == changed          # exactly what the command changed


# --- a change that fails part-way ------------------------------------------------------------

def make_read_only(folder: Path):
    """Make `folder` refuse new files (root ignores modes: the immutable attribute then)."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True, capture_output=True)
    else:
        for path in folder.iterdir():
            path.chmod(0o444)
        folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except OSError:
        return
    (folder / "probe").unlink()
    undo_read_only(folder)
    pytest.skip("this file system lets every write through (no read-only folders here)")


def undo_read_only(folder: Path):
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], check=True, capture_output=True)
    else:
        folder.chmod(0o755)
        for path in folder.iterdir():
            path.chmod(0o644)


def test_a_correction_that_cannot_replace_the_old_note_changes_nothing(memory):
    mem, info, _t = memory
    root = mem.vault.root
    # The user moved the memory into a folder of their own, which then became read-only.
    locked = root / "Memory" / "Facts" / "Locked"
    locked.mkdir()
    moved = f"Memory/Facts/Locked/{Path(info['lisbon']).name}"
    os.replace(root / info["lisbon"], root / moved)
    history.commit_user_edits(root, [info["lisbon"], moved])
    mem.reindex()
    head, before, indexed = git(root, "rev-parse", "HEAD"), vault_files(root), mem.indexer.index.path_hashes()
    make_read_only(locked)
    try:
        result = CliRunner().invoke(cli, ["--vault", str(root), "correct", moved, "The user lives in Porto."])
    finally:
        undo_read_only(locked)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "PermissionError" not in result.output
    assert "vaultmem could not write Memory/Facts/Locked" in result.output
    assert "nothing was changed" in result.output
    assert vault_files(root) == before                       # byte for byte; no temp file
    assert git(root, "rev-parse", "HEAD") == head and uncommitted(root) == []
    assert mem.indexer.index.path_hashes() == indexed
    assert read_note(root / moved).status == "active"
    assert held_paths(mem.vault) == (set(), set())           # nothing left for the daemon


def test_the_daemon_waits_for_a_change_under_way_and_never_takes_it_for_the_users(memory):
    mem, info, _t = memory
    root = mem.vault.root
    clock = FakeClock()
    chores = Chores(mem, Gate(), clock=clock)
    head = git(root, "rev-parse", "HEAD").strip()
    with vault_change(mem.vault, "vaultmem: test change", "test", indexer=mem.indexer) as ch:
        ch.write("Memory/Facts/Written by vaultmem.md", "---\nid: 01JTEST\ntype: fact\nstatus: active\n"
                 "user: default\n---\nThe user owns a red bicycle.\n")
        assert held_paths(mem.vault)[0] == {"Memory/Facts/Written by vaultmem.md"}
        chores.edited(["Memory/Facts/Written by vaultmem.md"])
        clock.now += chores.quiet
        chores.run_due()                                     # still being written: left alone
        assert git(root, "rev-parse", "HEAD").strip() == head
        assert chores.edits_waiting == 1
    assert last_commit(root)[:2] == ("vaultmem", "vaultmem: test change")
    clock.now += chores.quiet
    chores.run_due()
    assert git(root, "rev-list", "--count", f"{head}..HEAD").strip() == "1"  # no "user edit" after it


# --- the daemon's commits of the user's edits ----------------------------------------------------

def test_user_edit_commits_name_exactly_the_notes_changed_and_how(memory, git_identity):
    mem, info, _t = memory
    root = mem.vault.root
    clock = FakeClock()
    chores = Chores(mem, Gate(), clock=clock)
    lisbon, tea, bread, knit = (info[k] for k in ("lisbon", "tea", "bread", "knit"))
    path = root / lisbon
    path.write_text(path.read_text(encoding="utf-8") + "\nNear the river.\n", encoding="utf-8")
    renamed = "Memory/Preferences/Green tea.md"
    os.replace(root / tea, root / renamed)
    (root / bread).unlink()
    # Events name notes that did not change too (a save with the same bytes): never in the commit.
    chores.edited([lisbon, tea, renamed, bread, knit])
    clock.now += chores.quiet
    chores.run_due()
    author, subject, action = last_commit(root)
    assert (author, action) == ("Ada", "user-edit")
    assert subject == ("Delete 'The user bakes bread on Sundays', edit 'The user lives in Lisbon', "
                       "rename 'The user prefers green tea' to 'Green tea' in Obsidian")  # in path order
    body = [line for line in git(root, "log", "-1", "--format=%b").splitlines() if line and ":" in line
            and not line.startswith("Vaultmem-")]
    assert sorted(body) == sorted([f"edited: {lisbon}", f"deleted: {bread}", f"renamed: {tea} -> {renamed}"])
    status = git(root, "show", "--name-status", "-M", "--format=", "HEAD").split("\n")
    assert sorted(filter(None, status)) == sorted([f"M\t{lisbon}", f"D\t{bread}", f"R100\t{tea}\t{renamed}"])
    assert uncommitted(root) == []

    # More than three: counted by kind in the subject, every one named in the body.
    for n in range(4):
        (root / f"Memory/Facts/Note {n}.md").write_text(f"Note {n}\n", encoding="utf-8")
    (root / knit).unlink()
    chores.edited([f"Memory/Facts/Note {n}.md" for n in range(4)] + [knit])
    clock.now += chores.quiet
    chores.run_due()
    assert last_commit(root)[1] == "Create 4 notes, delete 1 note in Obsidian"
    body = git(root, "log", "-1", "--format=%b")
    assert all(f"created: Memory/Facts/Note {n}.md" in body for n in range(4)) and f"deleted: {knit}" in body


def test_what_a_killed_change_left_is_committed_as_vaultmems_interrupted_change(memory):
    mem, info, _t = memory
    root = mem.vault.root
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    rel = "Memory/Facts/Half done.md"
    (root / rel).write_text("---\nid: 01JHALF\ntype: fact\nstatus: active\nuser: default\n---\nHalf.\n",
                            encoding="utf-8")
    journal = root / ".vaultmem" / "changes" / f"{dead}-1.open"
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text(json.dumps({"pid": int(dead), "message": "vaultmem: add fact 'Half done'",
                                   "action": "created"}) + "\n" + json.dumps({"path": rel}) + "\n")
    assert held_paths(mem.vault) == (set(), {rel})          # the daemon would not take it as the user's
    assert [c["message"] for c in mem.recover()["commits"]] == \
        ["vaultmem: add fact 'Half done' (interrupted: what it had written)"]
    assert last_commit(root) == ("vaultmem", "vaultmem: add fact 'Half done' (interrupted: what it had written)",
                                 "created")
    assert not journal.exists() and uncommitted(root) == []
