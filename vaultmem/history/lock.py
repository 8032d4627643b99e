"""`.git/index.lock`, held as git holds it (`IndexLock`), waited for with backoff while
another git process holds it; a lock a killed vaultmem process left behind is recognised and
removed (`clear_stale_locks`), another process's never.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from vaultmem.errors import HistoryError
from vaultmem.history.repo import Repo

DEFAULT_LOCK_TIMEOUT = 10.0


def lock_timeout() -> float:
    """Seconds to wait for another git process's index.lock ($VAULTMEM_GIT_LOCK_TIMEOUT)."""
    return float(os.environ.get("VAULTMEM_GIT_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT))


class IndexLock:
    """Hold `.git/index.lock` the way git does (create-exclusive), waiting with backoff while
    another process (obsidian-git, a terminal) holds it.

    The lock file says whose it is (`vaultmem <pid> <host>`), and vaultmem processes take
    `.git/vaultmem.lock` (a kernel lock, dropped when its holder dies) around it. So a lock
    left by a vaultmem process that was killed mid-commit is recognised and removed; any
    other process's lock is only ever waited for."""

    def __init__(self, repo: Repo, timeout: float | None = None):
        self.path = repo.git_dir / "index.lock"
        self.git_dir = repo.git_dir
        self.timeout = lock_timeout() if timeout is None else timeout
        self.held = False
        self._guard: int | None = None

    def __enter__(self):
        deadline = time.monotonic() + self.timeout
        self._guard = _take_guard(self.git_dir, deadline, self.path)
        delay = 0.1
        try:
            _remove_stale(self.git_dir)
            while True:
                try:
                    fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                except FileExistsError:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise HistoryError(
                            f"{self.path} is held by another git process (obsidian-git?) for over "
                            f"{self.timeout:g} s; the change is saved in the vault but not committed "
                            "— try again when that process is done, or raise VAULTMEM_GIT_LOCK_TIMEOUT"
                        ) from None
                    time.sleep(min(delay, left))
                    delay = min(delay * 2, 2.0)
                    continue
                try:
                    os.write(fd, _owner_tag().encode())
                finally:
                    os.close(fd)
                self.held = True
                return self
        except BaseException:
            self._release_guard()
            raise

    def __exit__(self, *exc):
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False
        self._release_guard()

    def _release_guard(self):
        if self._guard is not None:
            os.close(self._guard)  # closing drops the flock
            self._guard = None


def _owner_tag() -> str:
    import socket

    return f"vaultmem {os.getpid()} {socket.gethostname()}\n"


def _take_guard(git_dir: Path, deadline: float, lock_path: Path) -> int:
    """The flock on `.git/vaultmem.lock` that vaultmem processes take before index.lock."""
    import fcntl

    fd = os.open(git_dir / "vaultmem.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    delay = 0.05
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                os.close(fd)
                raise HistoryError(f"{lock_path} is held by another vaultmem process; the change is "
                                   "saved in the vault but not committed — try again in a moment") from None
            time.sleep(min(delay, left))
            delay = min(delay * 2, 1.0)


def _remove_stale(git_dir: Path) -> list[str]:
    """With the guard held: remove index.lock and scratch index files of vaultmem processes
    that died (no live vaultmem can be inside a commit now). Returns the names removed."""
    import re
    import socket

    from vaultmem.store.files import pid_alive

    removed = []
    lock = git_dir / "index.lock"
    try:
        owner = lock.read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        owner = []
    if (len(owner) == 3 and owner[0] == "vaultmem" and owner[1].isdigit()
            and owner[2] == socket.gethostname() and not pid_alive(int(owner[1]))):
        lock.unlink(missing_ok=True)
        removed.append(lock.name)
    scratch = re.compile(r"^vaultmem-(\d+)-\d+\.(?:real-)?index$")
    for path in git_dir.glob("vaultmem-*index"):
        match = scratch.match(path.name)
        if match and not pid_alive(int(match.group(1))):
            path.unlink(missing_ok=True)
            removed.append(path.name)
    return removed


def clear_stale_locks(vault_root, timeout: float = 1.0) -> list[str]:
    """After a crash: remove the index.lock and scratch files a killed vaultmem process left
    in the vault's repository (others' locks are never touched). Returns what was removed;
    nothing when there is no repository or another vaultmem process is committing."""
    try:
        repo = Repo(vault_root)
    except HistoryError:
        return []
    with repo:
        try:
            guard = _take_guard(repo.git_dir, time.monotonic() + timeout, repo.git_dir / "index.lock")
        except HistoryError:
            return []
        try:
            return _remove_stale(repo.git_dir)
        finally:
            os.close(guard)
