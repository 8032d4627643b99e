"""Start, stop and inspect a vault's daemon from another process (the CLI's side).

    >>> start_daemon(vault_root)["pid"]        # doctest: +SKIP
    >>> daemon_status(vault_root)["state"]     # doctest: +SKIP
    'watching'
    >>> stop_daemon(vault_root)                # doctest: +SKIP

Nothing here imports the index, the model or the API: it works through the lock file and
the socket, so these commands are quick whatever the daemon is doing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from vaultmem.daemon.lock import lock_is_held, read_pid, running_pid
from vaultmem.errors import DaemonError
from vaultmem.ipc.client import LOG_NAME, request, state_dir, try_request

OUT_NAME = "daemon.out"  # the detached process's stdout/stderr (crashes before logging)
SPAWNED_NAME = "daemon.spawned"  # pid of the last detached start (no second one while it starts)
START_TIMEOUT = 60.0
STOP_TIMEOUT = 130.0  # a little over the daemon's own grace for the batch in flight


def daemon_status(vault_root) -> dict:
    """The daemon's own status, or `{"running": False}`; `state: "unreachable"` when a
    process holds the lock but its socket does not answer (starting, or stuck)."""
    root = Path(vault_root)
    try:
        result = try_request(root, "status", timeout=5.0)
    except DaemonError as exc:
        result, error = None, str(exc)
    else:
        error = None
    if result is not None:
        return result
    pid = running_pid(state_dir(root))
    if pid is not None or lock_is_held(state_dir(root)):
        return {"running": True, "pid": pid, "vault": str(root), "state": "unreachable",
                "last_error": {"reason": error or "the socket does not answer"}}
    return {"running": False, "vault": str(root)}


def start_daemon(vault_root, timeout: float = START_TIMEOUT, python: str | None = None) -> dict:
    """Start a detached daemon and return once it answers `status` (or raise DaemonError)."""
    root = Path(vault_root).resolve()
    current = daemon_status(root)
    if current.get("running"):
        return {"started": False, "already_running": True, "pid": current.get("pid"),
                "vault": str(root)}
    folder = state_dir(root)
    out_path = folder / OUT_NAME
    # One an autostart just spawned is still importing: wait for it instead of a second.
    process = None if _recently_spawned(folder) else _spawn(root, python)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = process.poll() if process is not None else None
        if code is not None:
            raise DaemonError(f"the daemon exited at startup (code {code}): "
                              f"{_tail(out_path) or _tail(folder / LOG_NAME) or 'no output'}")
        try:
            status = try_request(root, "status", timeout=2.0)
        except DaemonError:
            status = None
        if status is not None:
            return {"started": True, "pid": status.get("pid"), "vault": str(root),
                    "log": str(folder / LOG_NAME)}
        if process is None and not _recently_spawned(folder) and not lock_is_held(folder):
            process = _spawn(root, python)  # the autostarted one died before answering
        time.sleep(0.05)
    raise DaemonError(f"the daemon (pid {process.pid if process else read_pid(folder)}) did not "
                      f"answer within {timeout:g} s; see {folder / LOG_NAME}")


def spawn_daemon(vault_root) -> int | None:
    """Start a detached daemon without waiting for it (`[daemon] autostart`); its pid, or
    None when one already runs or was spawned less than START_TIMEOUT ago and is alive
    (it takes its lock only once its imports are done: two commands in a row start one)."""
    root = Path(vault_root).resolve()
    folder = state_dir(root)
    if lock_is_held(folder) or _recently_spawned(folder):
        return None
    return _spawn(root).pid


def _spawn(root: Path, python: str | None = None) -> subprocess.Popen:
    folder = state_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / OUT_NAME, "wb") as out:
        process = subprocess.Popen(
            [python or sys.executable, "-m", "vaultmem.daemon", "--vault", str(root),
             "--background"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=root,
            start_new_session=True, close_fds=True)
    try:
        (folder / SPAWNED_NAME).write_text(str(process.pid), encoding="ascii")
    except OSError:
        pass
    return process


def _recently_spawned(folder: Path) -> bool:
    marker = folder / SPAWNED_NAME
    try:
        pid = int(marker.read_text(encoding="ascii").strip())
        if time.time() - marker.stat().st_mtime > START_TIMEOUT:
            return False
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return False  # our own child, exited (a zombie until now)
        except ChildProcessError:
            pass
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def stop_daemon(vault_root, timeout: float = STOP_TIMEOUT) -> dict:
    """Ask the daemon to stop after the write in flight, and wait until it has exited."""
    root = Path(vault_root).resolve()
    folder = state_dir(root)
    if not lock_is_held(folder):
        return {"stopped": False, "running": False, "vault": str(root)}
    pid = read_pid(folder)
    try:
        request(root, "shutdown", timeout=5.0)
    except DaemonError:
        if pid is None:
            raise DaemonError("the daemon holds its lock but neither answers nor left a pid "
                              f"in {folder}; stop it by hand") from None
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    # The lock, not the pid, says when it is gone: the kernel drops the lock when the
    # process exits, even while it lingers as a zombie of the shell that started it.
    while lock_is_held(folder):
        if time.monotonic() > deadline:
            raise DaemonError(f"the daemon (pid {pid}) did not stop within {timeout:g} s; "
                              f"it may be finishing a long batch — or end it with `kill {pid}`")
        time.sleep(0.05)
    _reap(pid)
    return {"stopped": True, "pid": pid, "vault": str(root)}


def _reap(pid: int | None) -> None:
    if pid is None:
        return
    try:
        os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        pass


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])
