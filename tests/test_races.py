"""Races: a user editing a note while the extractor updates it, two vaultmem processes on
one vault, and another git process (obsidian-git) holding `.git/index.lock`.

Real vaults, git, LanceDB and the bundled model. The user's edits are ordinary file
appends; in the deterministic cases they are made at a chosen step of vaultmem's update
(by wrapping the function vaultmem calls there, which then calls the real one), in the
random cases from a thread at a random moment of the run (VAULTMEM_RACE_ROUNDS of them,
6 by default).
"""

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.wait import wait_for
from vaultmem import api
from vaultmem.daemon.lock import lock_is_held, running_pid
from vaultmem.errors import DaemonError
from vaultmem.history import git as history
from vaultmem.ipc import client
from vaultmem.memory import memories, write
from vaultmem.store.note import read_note

VAULTMEM = str(Path(sys.executable).parent / "vaultmem")
HOLD_LOCK = str(Path(__file__).parent / "helpers" / "hold_index_lock.py")
CITIES = ["Lisbon", "Porto", "Berlin", "Madrid", "Oslo", "Vienna", "Prague", "Dublin", "Krakow",
          "Turin", "Lyon", "Ghent", "Bergen", "Graz", "Seville", "Bremen", "Nantes", "Leeds"]
RANDOM_ROUNDS = int(os.environ.get("VAULTMEM_RACE_ROUNDS", "6"))


@pytest.fixture(autouse=True)
def no_fake_clock(monkeypatch):
    monkeypatch.delenv("VAULTMEM_NOW", raising=False)
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")


def git(root, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def transcript(folder: Path, n: int, city: str | None = None) -> Path:
    """A session restating the user's name (merged into the existing note) and a move
    (supersedes the current home note)."""
    lines = [("m-1", "My name is Alice."), ("m-2", f"Actually, I moved to {city or CITIES[n % len(CITIES)]}.")]
    path = folder / f"race-{n:03d}.jsonl"
    path.write_text("".join(json.dumps({"session": f"race-{n}", "id": mid, "time": f"2026-11-{1 + n % 28:02d}T10:0{i}:00",
                                        "speaker": "Alice", "role": "user", "text": text}) + "\n"
                            for i, (mid, text) in enumerate(lines)), encoding="utf-8")
    return path


def active_note(root: Path, words: str) -> Path:
    found = [p for p in (root / "Memory" / "Facts").glob("*.md")
             if read_note(p).status == "active" and words in read_note(p).statement()]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def race_vault(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("races") / "vault"
    api.init(root)
    mem = api.Memory(root, embedder=embedder)
    seeded = mem.extract([transcript(root.parent, 0)])
    assert seeded["created"] >= 2, seeded
    return mem


def user_append(path: Path, marker: str) -> None:
    """What an editor does: the file is rewritten in place with one more line."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"\nUser's own line {marker}\n")


def assert_kept(path: Path, marker: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert f"User's own line {marker}" in text, f"the user's edit was lost from {path.name}:\n{text}"
    read_note(path)  # and the note still parses


# --- a user edit while the extractor updates the same note -----------------------------

# Where in vaultmem's update of a note the user's edit lands: the module and function
# wrapped, and whether the edit goes before or after the real call.
STEPS = {
    "before vaultmem reads the note": (write, "read_note", "before"),
    "after vaultmem read it, before it checks": (memories, "read_note", "after"),
    "while vaultmem writes it": (memories, "atomic_write", "before"),
    "right after vaultmem wrote it": (memories, "atomic_write", "after"),
}


@pytest.mark.parametrize("target", ["merge", "supersede"])
@pytest.mark.parametrize("step", list(STEPS))
def test_user_edit_at_each_step_of_an_update_is_kept(race_vault, monkeypatch, target, step):
    mem, root = race_vault, race_vault.vault.root
    n = 1 + len(STEPS) * ["merge", "supersede"].index(target) + list(STEPS).index(step)
    path = active_note(root, "introduced themselves as" if target == "merge" else "moved to")
    marker = f"{target}-{n}"
    module, name, when = STEPS[step]
    real = getattr(module, name)
    fired = []

    def hooked(*args, **kwargs):
        hit = Path(args[0]) == path and not fired
        if hit and when == "before":
            fired.append(1)
            user_append(path, marker)
        result = real(*args, **kwargs)
        if hit and when == "after":
            fired.append(1)
            user_append(path, marker)
        return result

    monkeypatch.setattr(module, name, hooked)
    report = mem.extract([transcript(root.parent, n)])
    monkeypatch.undo()
    assert fired, f"vaultmem never updated {path.name} ({report['decisions']})"
    assert_kept(path, marker)
    decisions = {d["content"]: d for d in report["decisions"]}
    assert any(d["action"] in ("updated", "superseded", "rejected") for d in decisions.values())
    assert not (root / ".git" / "index.lock").exists()


def test_user_edits_at_random_moments_of_runs_are_kept(race_vault):
    """Both orders by chance, many times: the edit lands anywhere in the run."""
    mem, root = race_vault, race_vault.vault.root
    rng = random.Random(20261130)
    started = time.monotonic()
    mem.extract([transcript(root.parent, 100)])
    duration = time.monotonic() - started
    for round in range(RANDOM_ROUNDS):
        n = 101 + round
        target = active_note(root, "introduced themselves as" if round % 2 else "moved to")
        marker = f"random-{n}"
        delay = rng.uniform(0, duration)
        gate = threading.Barrier(2)

        def edit():
            gate.wait()
            time.sleep(delay)
            user_append(target, marker)

        editor = threading.Thread(target=edit)
        editor.start()
        gate.wait()
        mem.extract([transcript(root.parent, n)])
        editor.join()
        assert_kept(target, marker)
    subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=root, check=True,
                   capture_output=True)
    # An edit drawn late lands after its run ended: an uncommitted edit of the person's,
    # which the daemon (not running here) would commit as theirs. Commit it so, so that the
    # tests after this one start from a clean vault.
    edited = [line[3:].strip('"') for line in git(root, "status", "--porcelain", "--", "Memory").splitlines()]
    assert all(line.startswith(" M ") for line in git(root, "status", "--porcelain", "--", "Memory").splitlines())
    history.commit_user_edits(root, edited)
    assert not git(root, "status", "--porcelain", "--", "Memory")


def test_a_note_that_keeps_changing_is_refused_and_reported(race_vault, monkeypatch):
    """An editor saving between each of vaultmem's reads and writes: after a few re-reads
    vaultmem gives up on that note, says so, and every one of the user's lines is there."""
    mem, root = race_vault, race_vault.vault.root
    path = active_note(root, "introduced themselves as")
    real = memories.read_note
    saves = []

    def edit_after_each_read(p):
        note = real(p)
        if Path(p) == path:
            saves.append(f"busy-{len(saves)}")
            user_append(path, saves[-1])
        return note

    monkeypatch.setattr(memories, "read_note", edit_after_each_read)
    report = mem.extract([transcript(root.parent, 200)])
    monkeypatch.undo()
    assert any("changed while vaultmem was updating it" in e for e in report["errors"]), report["errors"]
    assert len(saves) == memories.UPDATE_ATTEMPTS
    for marker in saves:
        assert_kept(path, marker)
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".vaultmem-")]


# --- another git process holds .git/index.lock ---------------------------------------

def hold_lock(root: Path, seconds: float) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, HOLD_LOCK, str(root / ".git" / "index.lock"), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_held_index_lock_delays_a_commit_then_it_goes_through(race_vault, monkeypatch):
    mem, root = race_vault, race_vault.vault.root
    monkeypatch.setenv("VAULTMEM_GIT_LOCK_TIMEOUT", "20")
    commits = int(git(root, "rev-list", "--count", "HEAD"))
    holder = hold_lock(root, 1.5)
    try:
        result = mem.add("The user keeps bees in the garden.", type="fact")
        assert result["action"] == "created"
        # The holder found its lock intact when it let go (vaultmem never took it over).
        assert holder.stdout.readline().strip() == "released intact"
        assert holder.wait(10) == 0
    finally:
        holder.kill()
    assert int(git(root, "rev-list", "--count", "HEAD")) == commits + 1
    assert git(root, "log", "-1", "--format=%s").startswith("vaultmem: add fact")
    assert result["path"] in git(root, "show", "--name-only", "--format=", "HEAD")
    assert not (root / ".git" / "index.lock").exists()


def test_a_lock_held_past_the_timeout_keeps_the_change_and_says_so(race_vault, monkeypatch):
    """The one policy for a commit that fails (vaultmem.history.change): the note stays, indexed,
    the result says why git did not record it, and vaultmem's next change commits it first,
    as vaultmem's, under its own message."""
    mem, root = race_vault, race_vault.vault.root
    monkeypatch.setenv("VAULTMEM_GIT_LOCK_TIMEOUT", "0.5")
    head = git(root, "rev-parse", "HEAD")
    holder = hold_lock(root, 3.0)
    try:
        result = mem.add("The user repairs old radios.", type="fact")
        assert result["action"] == "created"
        assert re.search(r"index\.lock.*held by another git process", result["warning"]), result
        assert "saved in the vault and indexed" in result["warning"]
        assert (root / ".git" / "index.lock").read_text() == "obsidian-git\n"  # untouched
        assert holder.stdout.readline().strip() == "released intact"
        assert holder.wait(10) == 0
    finally:
        holder.kill()
    assert git(root, "rev-parse", "HEAD") == head
    saved = [p for p in (root / "Memory" / "Facts").glob("*.md") if "repairs old radios" in p.read_text()]
    assert len(saved) == 1 and read_note(saved[0]).status == "active"
    assert result["path"] in mem.indexer.index.path_hashes()

    later = mem.add("The user grows tomatoes on the balcony.", type="fact")
    assert "warning" not in later
    log = [line for line in git(root, "log", "-2", "--format=%an|%s|%(trailers:key=Vaultmem-Action,valueonly)")
           .splitlines() if line]
    assert log[1] == f"vaultmem|vaultmem: add fact '{Path(result['path']).stem}'|created"
    assert log[0].startswith("vaultmem|vaultmem: add fact")
    assert git(root, "show", "--name-only", "--format=", "HEAD~1").splitlines() == [result["path"]]
    assert not git(root, "status", "--porcelain", "--", "Memory")


# --- two vaultmem processes on one vault ----------------------------------------------

def vaultmem(*args, vault, check=True, timeout=180):
    done = subprocess.run([VAULTMEM, "--vault", str(vault), *args], capture_output=True, text=True,
                          env=dict(os.environ, TOKENIZERS_PARALLELISM="false"), timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"vaultmem {' '.join(args)} failed: {done.stderr}")
    return done


@pytest.fixture(scope="module")
def daemon_vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("two") / "vault"
    vaultmem("init", str(root), vault=root)
    started = json.loads(vaultmem("daemon", "start", "--json", vault=root).stdout)
    try:
        assert started["started"]
        wait_for(lambda: client.request(root, "status")["state"] == "watching", "watching", deadline=120)
        yield root, started["pid"]
    finally:
        from vaultmem.daemon.control import stop_daemon

        try:
            stop_daemon(root, timeout=60)
        except DaemonError:
            pid = running_pid(root / ".vaultmem")
            if pid:
                os.kill(pid, 9)


def test_a_second_daemon_refuses_and_names_the_running_one(daemon_vault):
    root, pid = daemon_vault
    second = subprocess.run([sys.executable, "-m", "vaultmem.daemon", "--vault", str(root)],
                            capture_output=True, text=True, timeout=120)
    assert second.returncode != 0
    assert "already running" in second.stderr and f"pid {pid}" in second.stderr, second.stderr
    foreground = vaultmem("daemon", "run", vault=root, check=False)
    assert foreground.returncode != 0 and f"pid {pid}" in foreground.stderr, foreground.stderr
    # The first one still owns the vault and answers on its socket.
    assert client.request(root, "status")["pid"] == pid and lock_is_held(root / ".vaultmem")


def test_cli_extracts_while_the_daemon_runs_go_through_it_one_commit_each(daemon_vault):
    root, pid = daemon_vault
    before = int(git(root, "rev-list", "--count", "HEAD"))
    files = [transcript(root.parent, 300 + i, city=CITIES[i]) for i in range(3)]
    runs = [subprocess.Popen([VAULTMEM, "--vault", str(root), "extract", "--json", str(f)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for f in files]
    reports = []
    for run in runs:
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
        reports.append(json.loads(out))
    assert client.request(root, "status")["pid"] == pid  # the daemon did the work and lives on
    run_ids = {r["run"] for r in reports}
    assert len(run_ids) == 3
    new_commits = int(git(root, "rev-list", "--count", "HEAD")) - before
    log = git(root, "log", f"-{new_commits}", "-z",
              "--format=%(trailers:key=Vaultmem-Run,valueonly,separator=%x2C)%x1f"
              "%(trailers:key=Vaultmem-Action,valueonly,separator=%x2C)")
    commits = [record.split("\x1f") for record in log.strip("\0\n").split("\0")]
    extract_commits = [run.strip() for run, action in commits if action.strip() == "extract"]
    assert sorted(extract_commits) == sorted(run_ids), log  # one commit per run
    # Serialised, not interleaved: one name note, one active home (the last run's city).
    facts = [read_note(p) for p in (root / "Memory" / "Facts").glob("*.md")]
    names = [n for n in facts if "introduced themselves as" in n.statement()]
    homes = [n for n in facts if "moved to" in n.statement() and n.status == "active"]
    assert len(names) == 1, [n.statement() for n in names]
    assert len(homes) == 1, [n.statement() for n in homes]
    assert len({n.id for n in facts}) == len(facts)
    status = client.request(root, "flush", {"timeout": 30})
    assert status["idle"]
    doctor = api.Memory(root).doctor()
    assert doctor["drift"] == {"missing": [], "stale": [], "orphaned": []}
    subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=root, check=True, capture_output=True)
