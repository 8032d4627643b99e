"""Crash safety: vaultmem writers and the daemon killed with SIGKILL at random moments.

After every kill and a restart: no note is truncated or half-written, no temp file is left
(or taken for a note), `git fsck --strict` is clean, no `.git/index.lock` stays behind,
and `doctor` reports no drift. `tests/helpers/crash_driver.py` does the killing (it loads
the model once and forks a real writer per kill point): 44 writer and 6 daemon kill points
in `make test-all`, 16 and 2 of them in `make test` (tests/helpers/sweep.py);
VAULTMEM_CRASH_POINTS and VAULTMEM_CRASH_DAEMON_POINTS set the counts.
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.sweep import sweep_size
from tests.helpers.wait import wait_for
from vaultmem.daemon.lock import lock_is_held, running_pid
from vaultmem.errors import DaemonError
from vaultmem.ipc import client

DRIVER = Path(__file__).parent / "helpers" / "crash_driver.py"
VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
WRITER_POINTS = sweep_size("VAULTMEM_CRASH_POINTS", sampled=16, full=44)
DAEMON_POINTS = sweep_size("VAULTMEM_CRASH_DAEMON_POINTS", sampled=2, full=6)
SEED = int(os.environ.get("VAULTMEM_CRASH_SEED", "20261130"))


def driver_env():
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    for name in ("VAULTMEM_NOW", "VAULTMEM_VAULT", "VAULTMEM_NO_DAEMON"):
        env.pop(name, None)
    return env


@pytest.mark.sweep
def test_sigkill_at_random_points_loses_and_corrupts_nothing(tmp_path):
    out = tmp_path / "crash.json"
    done = subprocess.run([sys.executable, str(DRIVER), str(tmp_path / "vault"), "--points", str(WRITER_POINTS),
                           "--daemon-points", str(DAEMON_POINTS), "--seed", str(SEED), "--json", str(out)],
                          capture_output=True, text=True, env=driver_env(), timeout=1800)
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(out.read_text())
    failed = summary["failed"]
    assert not failed, json.dumps(failed, indent=1)[:4000]
    # Every kill point is a run really killed mid-way (the driver keeps going until then).
    assert summary["killed"] == summary["survived"] >= WRITER_POINTS + DAEMON_POINTS
    print(f"\ncrash safety: {summary['survived']} SIGKILLs mid-write survived "
          f"({summary['runs']} runs, seed {SEED})")


# --- the real daemon process, killed and restarted through the CLI ------------------------

def vaultmem(*args, vault, check=True):
    done = subprocess.run([VAULTMEM, "--vault", str(vault), *args], capture_output=True, text=True,
                          env=driver_env(), timeout=180)
    if check and done.returncode != 0:
        raise AssertionError(f"vaultmem {' '.join(args)} failed: {done.stderr}")
    return done


def status(root):
    return json.loads(vaultmem("daemon", "status", "--json", vault=root, check=False).stdout)


@pytest.fixture
def vault(tmp_path):
    """A new vault whose daemon takes an inbox transcript as settled after 0.5 s (2 s by
    default: the user's edits, committed 5 s after them, are still pending at the kill)."""
    root = tmp_path / "vault"
    vaultmem("init", str(root), vault=root)
    config = root / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert "inbox_settle_seconds = 2\n" in text
    config.write_text(text.replace("inbox_settle_seconds = 2\n", "inbox_settle_seconds = 0.5\n"), encoding="utf-8")
    yield root
    pid = running_pid(root / ".vaultmem")
    if pid:
        os.kill(pid, signal.SIGKILL)


def test_daemon_killed_mid_extraction_recovers_through_the_cli(vault, tmp_path):
    """`daemon start`, an extraction through it and user edits, `kill -9` while it works,
    `daemon start` again: it reconciles, re-extracts the inbox, and the vault is whole."""
    facts = vault / "Memory" / "Facts"
    for n in range(30):
        (facts / f"Owl fact {n}.md").write_text(
            f"---\nid: 01JOWL{n:020d}\ntype: fact\ncreated: 2026-11-01T09:00:00\nupdated: 2026-11-01T09:00:00\n"
            f"status: active\nuser: default\n---\nOwls fact number {n}: they hunt at dusk.\n", encoding="utf-8")
    started = json.loads(vaultmem("daemon", "start", "--json", vault=vault).stdout)
    pid = started["pid"]
    wait_for(lambda: status(vault).get("state") == "watching", "the daemon to watch", deadline=120)
    inbox = vault / "Memory" / "Inbox" / "chat.jsonl"
    inbox.write_text((Path(__file__).parent / "data" / "runs" / "en_day1.jsonl").read_text(encoding="utf-8"),
                     encoding="utf-8")
    for n in range(0, 30, 3):
        with open(facts / f"Owl fact {n}.md", "a", encoding="utf-8") as handle:
            handle.write("The user added this line by hand.\n")
    # Kill it mid-extraction: the session note is its first write, memories and commit follow.
    wait_for(lambda: any((vault / "Memory" / "Sessions").glob("*.md")), "the extraction to start", deadline=60)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not lock_is_held(vault / ".vaultmem"), "the killed daemon to be gone", deadline=30)
    assert client.try_request(vault, "status") is None  # its stale socket: callers fall back

    restarted = json.loads(vaultmem("daemon", "start", "--json", vault=vault).stdout)
    assert restarted["started"] and restarted["pid"] != pid
    wait_for(lambda: client.request(vault, "flush", {"timeout": 5}).get("idle")
             and not (vault / "Memory" / "Inbox" / "chat.jsonl").exists(), "the restart to catch up", deadline=180)
    report = json.loads(vaultmem("doctor", "--json", vault=vault, check=False).stdout)
    assert report["drift"] == {"missing": [], "stale": [], "orphaned": []}, report["drift"]
    assert not report["parse_errors"]
    assert not (vault / ".git" / "index.lock").exists()
    assert not [p for p in (vault / "Memory").rglob(".vaultmem-*")]
    subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=vault, check=True, capture_output=True)
    memories = json.loads(vaultmem("list", "--json", "--type", "fact", vault=vault).stdout)
    assert any("nurse" in n["text"] for n in memories["notes"])  # the transcript was extracted
    try:
        vaultmem("daemon", "stop", vault=vault)
    except AssertionError:
        raise DaemonError("the restarted daemon did not stop") from None


def test_only_a_dead_vaultmem_writers_leftovers_are_removed(tmp_path):
    """What `recover` removes: a killed vaultmem process's index.lock, scratch index and temp
    file. Another program's lock, and a live process's temp file, stay."""
    import socket

    from vaultmem import api
    from vaultmem.history import git as history

    root = tmp_path / "vault"
    api.init(root)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = root / ".git" / "index.lock"
    lock.write_text(f"vaultmem {dead.pid} {socket.gethostname()}\n")
    scratch = root / ".git" / f"vaultmem-{dead.pid}-1.index"
    scratch.write_bytes(b"DIRC")
    facts = root / "Memory" / "Facts"
    stale = facts / f".vaultmem-{dead.pid}-abc.tmp"
    live = facts / f".vaultmem-{os.getpid()}-def.tmp"
    stale.write_text("half a no")
    live.write_text("being written")
    mem = api.Memory(root)
    assert mem.recover() == {"temp_files": [f"Memory/Facts/{stale.name}"],
                             "git": ["index.lock", scratch.name], "commits": []}
    assert live.exists() and not stale.exists() and not lock.exists() and not scratch.exists()

    lock.write_text("obsidian-git\n")  # anyone else's lock is waited for, never removed
    assert mem.recover() == {"temp_files": [], "git": [], "commits": []}
    with pytest.raises(history.HistoryError, match="held by another git process"):
        history.commit(root, [".gitignore"], "vaultmem: test", action="test", lock_timeout=0.3)
    assert lock.read_text() == "obsidian-git\n"
