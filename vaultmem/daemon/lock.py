"""One daemon per vault: an exclusive `flock` on `.vaultmem/daemon.lock` held for its life.

The kernel drops the lock when the process dies, even on `kill -9`, so a stale pid file
never blocks a restart; the pid file is only a hint for `status` and `stop`.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from vaultmem.errors import DaemonError
from vaultmem.ipc.client import LOCK_NAME, PID_NAME


class DaemonLock:
    """The vault's daemon lock. `acquire()` raises `DaemonError` if another process holds it.

        >>> lock = DaemonLock(vault_root / ".vaultmem")     # doctest: +SKIP
        >>> lock.acquire(); ...; lock.release()              # doctest: +SKIP
    """

    def __init__(self, state_dir: Path):
        self.state_dir = Path(state_dir)
        self.lock_path = self.state_dir / LOCK_NAME
        self.pid_path = self.state_dir / PID_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            pid = read_pid(self.state_dir)
            who = f" (pid {pid})" if pid else ""
            raise DaemonError(f"a vaultmem daemon is already running for this vault{who}; "
                              "stop it with `vaultmem daemon stop`") from None
        self._fd = fd
        _write_pid(self.pid_path, os.getpid())

    def release(self) -> None:
        if self._fd is None:
            return
        # Remove the pid file only if it is still ours (a successor may have written its own).
        if read_pid(self.state_dir) == os.getpid():
            try:
                self.pid_path.unlink()
            except FileNotFoundError:
                pass
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()


def _write_pid(path: Path, pid: int) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{pid}\n", encoding="ascii")
    os.replace(tmp, path)


def read_pid(state_dir: Path) -> int | None:
    """The pid recorded in `daemon.pid`, or None if there is none or it is unreadable."""
    try:
        return int((Path(state_dir) / PID_NAME).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def lock_is_held(state_dir: Path) -> bool:
    """True when some process holds the daemon lock (tests it without keeping it)."""
    path = Path(state_dir) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def running_pid(state_dir: Path) -> int | None:
    """The pid of the vault's live daemon, or None when no daemon holds the lock."""
    if not lock_is_held(state_dir):
        return None
    return read_pid(state_dir)
