"""Atomic file writes: a temp file beside the target, fsync, rename over (`atomic_write`); the
temp files name their writer's pid, so that a dead writer's leftovers are known (`pid_alive`)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from vaultmem.errors import ConcurrentEdit

TEMP_PREFIX = ".vaultmem-"
# Temp files name their writer's pid (`.vaultmem-<pid>-...tmp`), so that the leftovers of a
# killed writer can be told apart from the files of one still writing.
TEMP_NAME = re.compile(r"^\.vaultmem-(\d+)-.*\.tmp$")


def atomic_write(path: Path, text: str | bytes, *, overwrite: bool = True, expected: bytes | None = None,
                 mode: int | None = None) -> None:
    """Write text (UTF-8, line ends as given) or bytes (exactly: a restored version keeps its
    BOM and line ends) so that readers see the old file or the new one, never half of either:
    temp file in the same folder, fsync, rename over, fsync the folder. The new file keeps
    the old one's permissions (`mode` sets them instead; 0644 for a new file).

    With `overwrite=False` the file must not exist yet: it appears complete or not at all,
    and FileExistsError is raised if another writer (Obsidian, the daemon) took the name
    first — checking first and renaming after would silently replace that note.

    With `expected`, the file is replaced only if it still holds exactly those bytes, checked
    at the last moment (after the slow fsync); an editor that writes in place during the
    rename itself is noticed and its file put back. ConcurrentEdit is raised either way,
    and the other writer's text stays."""
    path = Path(path)
    if path.is_symlink():
        # Replace the note the link points to, not the user's link.
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".tmp")
    try:
        data = text.encode("utf-8") if isinstance(text, str) else text
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif path.exists() and overwrite:
            os.chmod(tmp, path.stat().st_mode & 0o777)
        else:
            os.chmod(tmp, 0o644)
        if expected is not None:
            _replace_if_unchanged(tmp, path, expected)
        elif overwrite:
            os.replace(tmp, path)
        else:
            _link_new(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _replace_if_unchanged(tmp: str, path: Path, expected: bytes) -> None:
    """Rename tmp over path if path still holds `expected`. A hard link keeps the old file
    reachable across the rename, so a write into it at that very moment is not lost."""
    changed = ConcurrentEdit(f"{path.name} changed while vaultmem was updating it; the other "
                             "change is kept — run the command again")
    held = tmp[:-len(".tmp")] + ".held.tmp"
    try:
        os.link(path, held)
    except FileNotFoundError:
        raise changed from None
    except OSError:  # no hard links here: check, then rename
        held = None
    try:
        if Path(held or path).read_bytes() != expected:
            raise changed
        os.replace(tmp, path)
        if held is not None and Path(held).read_bytes() != expected:
            os.replace(held, path)  # an editor wrote into the old file meanwhile: it wins
            held = None
            raise changed
    finally:
        if held is not None:
            try:
                os.unlink(held)
            except FileNotFoundError:
                pass


def pid_alive(pid: int) -> bool:
    """True while process `pid` runs (a zombie, killed but not yet reaped, is dead)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _link_new(tmp: str, path: Path) -> None:
    """Give the finished temp file its name only if that name is free (link is atomic and
    never replaces); on file systems without hard links, reserve the name with O_EXCL."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        os.replace(tmp, path)
        return
    os.unlink(tmp)
