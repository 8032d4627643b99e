"""Vault watching: watchdog events folded into a coalescing queue the worker drains.

watchdog's thread only records `{rel_path: change}` here; all reading, hashing and
embedding happens in the daemon's worker (STYLE: never embed in the event thread).
A burst (Obsidian autosaving while the user types, a sync tool touching hundreds of files)
is released as one batch after a quiet step, or after a maximum wait if it never calms.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable

from vaultmem.store.layout import STATE_DIR

log = logging.getLogger("vaultmem.daemon")

ADDED, MODIFIED, DELETED = "added", "modified", "deleted"
# Queued when git moved HEAD (a pull, a merge, a checkout): not a note, a cue to look.
HEAD_MOVED = ".git/HEAD"
# What git rewrites when HEAD moves: the branch ref (renamed over from its .lock), HEAD
# itself (a checkout), and the reflog every move appends to.
_HEAD_FILES = (".git/HEAD", ".git/logs/HEAD", ".git/ORIG_HEAD")
# A burst at least this large is a bulk arrival (a pull, a sync tool copying hundreds of
# notes): it is released once quiet, or after BULK_MAX_WAIT, as one batch.
BULK_NOTES = 32
BULK_MAX_WAIT = 10.0
# Period of the fallback polling observer (only when native watching cannot start).
POLL_SECONDS = 5.0

# (what is queued, what arrives) -> what stays queued. Only `DELETED` is dropped by a
# modify; an add followed by a delete is kept as DELETED, because an "added" path may
# have been indexed before (a save that renames a temp file over the note).
_FOLD = {
    (ADDED, ADDED): ADDED, (ADDED, MODIFIED): ADDED, (ADDED, DELETED): DELETED,
    (MODIFIED, ADDED): MODIFIED, (MODIFIED, MODIFIED): MODIFIED, (MODIFIED, DELETED): DELETED,
    (DELETED, ADDED): MODIFIED, (DELETED, MODIFIED): DELETED, (DELETED, DELETED): DELETED,
}


def fold(queued: str | None, arriving: str) -> str:
    """The change to keep queued for a path when `arriving` follows `queued`."""
    return arriving if queued is None else _FOLD[(queued, arriving)]


class Coalescer:
    """A thread-safe `dict[rel_path, change]` released in quiet batches.

    `take()` blocks (no polling) until something is queued, then returns the batch once
    no event arrived for `quiet` seconds or `max_wait` seconds passed since the first
    (`bulk_max_wait` once `bulk_at` paths are queued: a `git pull` writing notes for two
    seconds is indexed as one batch, not as one per second).
    `request_rescan()` asks the worker for a whole-vault reconciliation (a folder was
    deleted or moved out, which watchdog reports without the files in it).
    """

    def __init__(self, quiet: float = 0.2, max_wait: float = 1.0, clock=time.monotonic,
                 bulk_at: int = BULK_NOTES, bulk_max_wait: float = BULK_MAX_WAIT):
        self.quiet = quiet
        self.max_wait = max_wait
        self.bulk_at = bulk_at
        self.bulk_max_wait = max(bulk_max_wait, max_wait)
        self._clock = clock
        self._cond = threading.Condition()
        self._pending: dict[str, str] = {}
        self._rescan = False
        self._first_at: float | None = None
        self._last_at: float | None = None
        self._woken = False

    def __len__(self) -> int:
        with self._cond:
            return len(self._pending)

    def put(self, rel: str, change: str) -> None:
        with self._cond:
            self._pending[rel] = fold(self._pending.get(rel), change)
            self._touch()

    def has_rescan(self) -> bool:
        with self._cond:
            return self._rescan

    def request_rescan(self) -> None:
        with self._cond:
            self._rescan = True
            self._touch()

    def _touch(self) -> None:
        now = self._clock()
        if self._first_at is None:
            self._first_at = now
        self._last_at = now
        self._cond.notify_all()

    def wake(self) -> None:
        """Make a blocked `take()` return now (empty) so the worker can re-check its state."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def take(self, timeout: float | None = None) -> tuple[dict[str, str], bool] | None:
        """`(batch, rescan)` once a burst settled, or None on timeout or `wake()`."""
        deadline = None if timeout is None else self._clock() + timeout
        with self._cond:
            while True:
                if self._woken:
                    self._woken = False
                    return None
                if self._first_at is not None:
                    now = self._clock()
                    longest = self.bulk_max_wait if len(self._pending) >= self.bulk_at else self.max_wait
                    due = min(self._last_at + self.quiet, self._first_at + longest)
                    if now >= due:
                        batch, rescan = self._pending, self._rescan
                        self._pending, self._rescan = {}, False
                        self._first_at = self._last_at = None
                        return batch, rescan
                    wait = due - now
                    if deadline is not None:
                        wait = min(wait, deadline - now)
                else:
                    wait = None if deadline is None else deadline - self._clock()
                if wait is not None and wait <= 0:
                    return None
                self._cond.wait(wait)


def make_handler(root: Path, accept: Callable[[str], bool], sink: Coalescer,
                 skip_dirs: tuple[str, ...] = (STATE_DIR, ".git"),
                 on_root_gone: Callable[[], None] | None = None):
    """A watchdog event handler feeding `sink` with vault-relative POSIX paths.

    `accept(rel)` decides which files matter (the vault's ignore rules, note suffixes,
    the inbox); events under `skip_dirs` (vaultmem's own state, git) are dropped first,
    so the daemon's own log and index writes never wake it up. `on_root_gone()` is called
    if the vault folder itself is deleted or moved away.
    """
    from watchdog.events import FileSystemEventHandler

    root_str = os.fspath(Path(root).resolve())
    skip_prefixes = tuple(d + "/" for d in skip_dirs)

    def to_rel(path) -> str | None:
        path = os.fsdecode(path)
        if not path:
            return None
        rel = os.path.relpath(path, root_str)
        if rel.startswith("..") or rel == ".":
            return None
        rel = rel.replace(os.sep, "/")
        if rel in skip_dirs or rel.startswith(skip_prefixes):
            if rel in _HEAD_FILES or (rel.startswith(".git/refs/heads/") and not rel.endswith(".lock")):
                sink.put(HEAD_MOVED, MODIFIED)
            return None
        return rel

    class VaultEventHandler(FileSystemEventHandler):
        def on_any_event(self, event):
            kind = event.event_type
            if (event.is_directory and kind in ("deleted", "moved") and on_root_gone
                    and os.fsdecode(event.src_path).rstrip(os.sep) == root_str):
                on_root_gone()
                return
            if event.is_directory:
                # watchdog reports files inside a folder moved within the vault one by one,
                # but not those of a folder deleted, moved out, or created in one go.
                if kind in ("deleted", "moved", "created") and to_rel(event.src_path):
                    sink.request_rescan()
                return
            if kind == "moved":
                self._file(event.src_path, DELETED)
                self._file(event.dest_path, ADDED)
            elif kind == "created":
                self._file(event.src_path, ADDED)
            elif kind == "modified":
                self._file(event.src_path, MODIFIED)
            elif kind == "deleted":
                self._file(event.src_path, DELETED)

        def _file(self, path, change):
            rel = to_rel(path)
            if rel is not None and accept(rel):
                sink.put(rel, change)

    return VaultEventHandler()


def start_observer(root: Path, handler):
    """A started watchdog observer watching `root` recursively with `handler`.

    The native observer (inotify, FSEvents) blocks on the kernel. If it cannot start
    (inotify's watch limit on a huge vault), a polling observer with a slow period keeps
    the daemon useful, and the log says how to raise the limit.
    """
    from watchdog.events import (
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )
    from watchdog.observers import Observer
    from watchdog.observers.polling import PollingObserver

    kinds = [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent,
             DirCreatedEvent, DirDeletedEvent, DirMovedEvent]
    path = os.fspath(Path(root).resolve())
    try:
        observer = Observer()
        observer.daemon = True
        observer.schedule(handler, path, recursive=True, event_filter=kinds)
        observer.start()
    except OSError as exc:
        log.warning("native file watching failed (%s); polling every %.0f s instead. On Linux, "
                    "raise fs.inotify.max_user_watches to watch natively", exc, POLL_SECONDS)
        observer = PollingObserver(timeout=POLL_SECONDS)
        observer.daemon = True
        observer.schedule(handler, path, recursive=True, event_filter=kinds)
        observer.start()
    return observer
