"""Quiet-time chores of the daemon on a real vault: user-edit commits, export, gc."""

import logging
import subprocess

from vaultmem.api import Memory, init
from vaultmem.daemon.chores import Chores
from vaultmem.daemon.worker import Gate


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def make_vault(tmp_path, **settings):
    """A fresh vault whose config.toml has `key = value` lines replaced by `settings`."""
    root = tmp_path / "vault"
    init(root)
    config = root / ".vaultmem" / "config.toml"
    lines = config.read_text(encoding="utf-8").splitlines()
    for key, value in settings.items():
        lines = [f"{key} = {value}" if line.startswith(f"{key} =") else line for line in lines]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def note(root, rel, body):
    path = root / rel
    path.write_text("---\nid: 01JCHORE00000000000000000A\ntype: fact\ncreated: 2026-11-01T09:00:00\n"
                    "updated: 2026-11-01T09:00:00\nstatus: active\nuser: default\n---\n" + body + "\n",
                    encoding="utf-8")
    return rel


def git_subjects(root):
    return subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True,
                          text=True, check=True).stdout.splitlines()


def test_edits_are_committed_once_quiet(tmp_path):
    root = make_vault(tmp_path)
    clock = FakeClock()
    chores = Chores(Memory(root), Gate(), clock=clock)
    assert chores.next_due() is None
    rel = note(root, "Memory/Facts/Bread.md", "The user bakes bread on Sundays.")
    chores.edited([rel])
    assert chores.next_due() == chores.quiet
    clock.now += 2
    chores.edited([rel])  # still typing: the quiet time starts again
    clock.now += chores.quiet - 1
    chores.run_due()
    assert not any("Bread" in s for s in git_subjects(root))
    clock.now += 1
    chores.run_due()
    assert git_subjects(root)[0] == "Create 'Bread' in Obsidian"  # a new note, named exactly
    assert chores.edits_waiting == 0 and chores.next_due() is None


def test_git_failure_is_logged_once_and_not_raised(tmp_path, caplog, monkeypatch):
    # Each commit gives up on the held index.lock after half a second, not the default ten.
    monkeypatch.setenv("VAULTMEM_GIT_LOCK_TIMEOUT", "0.5")
    root = make_vault(tmp_path)
    clock = FakeClock()
    chores = Chores(Memory(root), Gate(), clock=clock)
    (root / ".git" / "index.lock").write_text("")  # another git process holds the index
    caplog.set_level(logging.WARNING, logger="vaultmem.daemon")
    for n in range(2):
        chores.edited([note(root, "Memory/Facts/Bread.md", f"version {n}")])
        clock.now += chores.quiet
        chores.run_due()
    assert len([r for r in caplog.records if "could not commit" in r.message]) == 1


def test_export_after_changes_and_gc_on_schedule(tmp_path, caplog):
    out = tmp_path / "CLAUDE.md"
    root = make_vault(tmp_path, export_on_change='"claude"', export_out=f'"{out}"', schedule_hours="2")
    memory = Memory(root)
    memory.add("The user prefers oat milk in coffee", type="preference")
    clock = FakeClock()
    chores = Chores(memory, Gate(), clock=clock)
    assert chores.next_due() == 2 * 3600
    chores.changed()
    assert chores.next_due() == chores.quiet
    clock.now += chores.quiet
    caplog.set_level(logging.INFO, logger="vaultmem.daemon")
    chores.run_due()
    assert "oat milk" in out.read_text(encoding="utf-8")
    clock.now += 2 * 3600
    chores.run_due()
    assert not [r for r in caplog.records if "failed" in r.message]
    assert chores.next_due() == 2 * 3600  # the next gc
