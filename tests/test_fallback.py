"""A command no daemon answers (vaultmem/cli/fallback.py): it does the work in-process as
always; `[daemon] autostart` starts a daemon for the next commands; a cold command that
loads the model says once why it is slow; an answer from an index the daemon is still
building says so. Real vaults, real CLI processes, real daemons."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.wait import wait_for
from vaultmem.cli.fallback import COLD_HINT, HINT_MARKER
from vaultmem.daemon.lock import lock_is_held, running_pid
from vaultmem.errors import DaemonError
from vaultmem.ipc import client

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
HINT = "no daemon running, loading the model"


def run(*args, vault, env=None):
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("VAULTMEM_NO_DAEMON", "VAULTMEM_NOW", "VAULTMEM_VAULT")}
    done = subprocess.run([VAULTMEM, "--vault", str(vault), *args], capture_output=True,
                          text=True, env=dict(full_env, **(env or {})), timeout=300)
    assert done.returncode == 0, f"vaultmem {' '.join(args)} failed: {done.stderr}"
    return done


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    run("init", str(root), vault=root)
    (root / "Memory" / "Facts" / "Tea.md").write_text(
        "---\nid: 01JTEA0000000000000000000A\ntype: fact\ncreated: 2026-11-01T09:00:00\n"
        "updated: 2026-11-01T09:00:00\nstatus: active\nuser: default\n---\n"
        "The user drinks green tea every morning.\n")
    run("reindex", "--json", vault=root)  # not through ask(): no hint yet
    assert not (root / ".vaultmem" / HINT_MARKER).exists()
    yield root
    folder = root / ".vaultmem"
    if lock_is_held(folder):  # a test failed with its daemon running
        from vaultmem.daemon.control import stop_daemon

        pid = running_pid(folder)
        try:
            stop_daemon(root, timeout=30)
        except DaemonError:
            if pid:
                os.kill(pid, signal.SIGKILL)


def set_autostart(root, on: bool):
    config = root / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert "autostart = false" in text
    config.write_text(text.replace("autostart = false", f"autostart = {str(on).lower()}"),
                      encoding="utf-8")


def test_a_cold_command_says_once_why_it_is_slow(vault):
    first = run("search", "what does the user drink", vault=vault)
    assert "green tea" in first.stdout
    assert first.stderr.count(HINT) == 1 and COLD_HINT in first.stderr
    assert (vault / ".vaultmem" / HINT_MARKER).is_file()
    again = run("context", "what does the user drink", vault=vault)
    assert HINT not in again.stderr
    # Nothing was started: autostart is off by default.
    assert not lock_is_held(vault / ".vaultmem")
    assert not (vault / ".vaultmem" / "daemon.spawned").exists()
    assert client.try_request(vault, "status") is None


def test_no_hint_with_json_nor_when_the_caller_chose_in_process(vault):
    as_json = run("search", "what does the user drink", "--json", vault=vault)
    assert json.loads(as_json.stdout)["hits"] and as_json.stderr.strip() == ""
    chosen = run("add", "The user walks to work", vault=vault, env={"VAULTMEM_NO_DAEMON": "1"})
    assert HINT not in chosen.stderr
    assert not (vault / ".vaultmem" / HINT_MARKER).exists()
    # A command that loads no model has nothing to warn about.
    listed = run("list", vault=vault)
    assert HINT not in listed.stderr
    assert HINT in run("add", "The user cycles on Sundays", vault=vault).stderr


def test_autostart_leaves_a_daemon_for_the_next_commands(vault):
    set_autostart(vault, True)
    cold = run("search", "what does the user drink", vault=vault)
    assert "green tea" in cold.stdout  # answered in-process, as without a daemon
    assert HINT not in cold.stderr and cold.stderr.count("started the daemon") == 1
    # A second cold command right after: the first one's daemon is still starting.
    second = run("search", "green tea", "--json", vault=vault)
    assert json.loads(second.stdout)["hits"] and second.stderr.strip() == ""
    status = wait_for(lambda: client.try_request(vault, "status"), "the autostarted daemon")
    spawned = int((vault / ".vaultmem" / "daemon.spawned").read_text())
    assert status["pid"] == spawned
    # Never two: no second process was started to lose the race for the lock.
    assert "already running" not in (vault / ".vaultmem" / "daemon.out").read_text()
    warm = run("search", "what does the user drink", "--json", vault=vault)
    assert json.loads(warm.stdout)["hits"][0]["path"] == "Memory/Facts/Tea.md"
    assert "started the daemon" not in warm.stderr
    assert client.request(vault, "status")["pid"] == spawned
    stopped = json.loads(run("daemon", "stop", "--json", vault=vault).stdout)
    assert stopped["stopped"] and stopped["pid"] == spawned


def test_daemon_commands_and_the_in_process_choice_never_autostart(vault):
    set_autostart(vault, True)
    status = subprocess.run([VAULTMEM, "--vault", str(vault), "daemon", "status"],
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 3
    run("search", "green tea", vault=vault, env={"VAULTMEM_NO_DAEMON": "1"})
    assert not (vault / ".vaultmem" / "daemon.spawned").exists()
    assert not lock_is_held(vault / ".vaultmem")


def test_an_answer_from_an_index_still_being_built_says_so(vault, git_identity, monkeypatch):
    """The daemon is building its first index at startup: a search waits a little, is
    sent back, and the CLI's own answer (from the index as built so far) carries the
    daemon's warning, in --json and on stderr."""
    from vaultmem.daemon import handlers
    from vaultmem.daemon.runner import Daemon

    monkeypatch.delenv("VAULTMEM_NOW", raising=False)
    monkeypatch.setattr(handlers, "READ_WAIT_DURING_BUILD", 0.5)   # "a little": 3 s a search otherwise
    daemon = Daemon(vault)
    daemon.server.start()
    try:
        daemon.worker.scan.begin()
        daemon.worker.scan.building()
        daemon.worker.rebuilding = "no index yet"
        with daemon.gate.write():  # the build holds the index
            done = run("search", "what does the user drink", "--json", vault=vault)
            human = run("search", "what does the user drink", vault=vault)
        answer = json.loads(done.stdout)
        assert answer["warning"] == ("the daemon is still indexing the vault (building the "
                                     "index): results may miss recent notes")
        assert "warning: the daemon is still indexing the vault" in human.stderr
        assert HINT not in human.stderr  # a daemon runs: nothing to advise
        assert daemon.status()["scan"]["phase"] == "building"
    finally:
        daemon.server.close()
