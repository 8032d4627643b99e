"""Local bookkeeping in `.vaultmem/state.db` (sqlite): file stats, memory access counts and
audit events git cannot keep.

File stats let a no-change scan of the vault skip reading files: a note whose size and
mtime match what was indexed is not even hashed. Access counts feed ranking and gc. Events
record what git no longer shows (a purge rewrites the commits that would tell of it).
Everything here can be deleted; the next `reindex` rebuilds the file stats.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from vaultmem.store.layout import STATE_DIR

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,      -- vault-relative POSIX path
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    content_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_fields (
    path TEXT PRIMARY KEY,      -- a typed memory note, vault-relative
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    fields TEXT NOT NULL        -- JSON [properties, statement], as write.load_pool reads them
);
CREATE TABLE IF NOT EXISTS access (
    note_id TEXT PRIMARY KEY,
    count INTEGER NOT NULL DEFAULT 0,
    first_access TEXT NOT NULL,
    last_access TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    date TEXT NOT NULL,         -- YYYY-MM-DDTHH:MM:SS (vaultmem's clock)
    action TEXT NOT NULL,       -- e.g. purge
    note_id TEXT,
    user TEXT,
    run TEXT,
    detail TEXT                 -- never the note's text or title (a purge erased them)
);
"""


@dataclass(frozen=True)
class FileStat:
    path: str
    size: int
    mtime_ns: int
    content_hash: str


class State:
    """The state database of one vault: `State(vault_root)`. One connection per object,
    shared by threads (the daemon searches while it indexes) under a lock."""

    def __init__(self, vault_root: str | Path):
        self.path = Path(vault_root) / STATE_DIR / "state.db"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=10, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        # WAL without fsync per commit: losing the last stats on a crash only costs a re-hash.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._conn.close()

    # --- file stats --------------------------------------------------------------------
    def files(self, paths=None, folders=None) -> dict[str, FileStat]:
        """Every recorded file, by vault-relative path; or only those of `paths`, or only
        those directly in one of `folders` (vault-relative, no trailing slash)."""
        query = "SELECT path, size, mtime_ns, content_hash FROM files"
        with self._lock:
            if paths is not None:
                rows = []
                paths = list(paths)
                for i in range(0, len(paths), 500):
                    part = paths[i:i + 500]
                    rows += self._conn.execute(
                        f"{query} WHERE path IN ({', '.join('?' * len(part))})", part).fetchall()
            elif folders is not None:
                rows = []
                for folder in folders:
                    # A range on the primary key, not LIKE (whose % and _ a title may hold).
                    rows += [row for row in self._conn.execute(
                        f"{query} WHERE path >= ? AND path < ?", (folder + "/", folder + "0")).fetchall()
                        if "/" not in row[0][len(folder) + 1:]]
            else:
                rows = self._conn.execute(query).fetchall()
        return {row[0]: FileStat(*row) for row in rows}

    def put_files(self, stats: list[FileStat]) -> None:
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO files (path, size, mtime_ns, content_hash) "
                "VALUES (?, ?, ?, ?)",
                [(s.path, s.size, s.mtime_ns, s.content_hash) for s in stats])

    def delete_files(self, paths) -> None:
        with self._lock, self._conn:
            self._conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in paths])

    def clear_files(self) -> None:
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM files")

    # --- the write policy's reading of memory notes ---------------------------------------
    def memory_fields(self) -> dict[str, tuple[int, int, str]]:
        """path -> (size, mtime_ns, JSON fields) of every memory note read before."""
        with self._lock:
            rows = self._conn.execute("SELECT path, size, mtime_ns, fields FROM memory_fields").fetchall()
        return {row[0]: row[1:] for row in rows}

    def put_memory_fields(self, rows, gone=()) -> None:
        """Record `(path, size, mtime_ns, fields)` rows and forget the `gone` paths."""
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO memory_fields (path, size, mtime_ns, fields) VALUES (?, ?, ?, ?)",
                list(rows))
            self._conn.executemany("DELETE FROM memory_fields WHERE path = ?", [(p,) for p in gone])

    # --- access tracking ---------------------------------------------------------------
    def record_access(self, note_ids, when: datetime | str) -> None:
        """Count one access (a search hit or a context inclusion) for each note id."""
        stamp = when if isinstance(when, str) else when.replace(microsecond=0).isoformat()
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT INTO access (note_id, count, first_access, last_access) "
                "VALUES (?, 1, ?, ?) ON CONFLICT(note_id) DO UPDATE SET "
                "count = count + 1, last_access = MAX(last_access, excluded.last_access)",
                [(note_id, stamp, stamp) for note_id in dict.fromkeys(note_ids)])

    def access_stats(self, note_id: str) -> dict:
        """`{"count", "first_access", "last_access"}` of a note (count 0 and None if never)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT count, first_access, last_access FROM access WHERE note_id = ?",
                (note_id,)).fetchone()
        if row is None:
            return {"count": 0, "first_access": None, "last_access": None}
        return {"count": row[0], "first_access": row[1], "last_access": row[2]}

    def all_access(self) -> dict[str, dict]:
        """Access stats of every note ever accessed, by note id."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT note_id, count, first_access, last_access FROM access").fetchall()
        return {r[0]: {"count": r[1], "first_access": r[2], "last_access": r[3]} for r in rows}


    # --- audit events -------------------------------------------------------------------
    def add_event(self, action: str, when: datetime | str, *, note_id: str | None = None,
                  user: str | None = None, run: str | None = None, detail: str | None = None) -> None:
        """Append one event to the audit trail (`vaultmem log` merges them with git's)."""
        stamp = when if isinstance(when, str) else when.replace(microsecond=0).isoformat()
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO events (date, action, note_id, user, run, detail) VALUES (?, ?, ?, ?, ?, ?)",
                (stamp, action, note_id, user, run, detail))

    def events(self, limit: int | None = None) -> list[dict]:
        """Recorded events, newest first: `{"date", "action", "note_id", "user", "run", "detail"}`."""
        query = "SELECT date, action, note_id, user, run, detail FROM events ORDER BY date DESC, seq DESC"
        with self._lock:
            rows = self._conn.execute(query + (" LIMIT ?" if limit else ""),
                                      (limit,) if limit else ()).fetchall()
        keys = ("date", "action", "note_id", "user", "run", "detail")
        return [dict(zip(keys, row)) for row in rows]


    # --- erasure --------------------------------------------------------------------------
    def erase(self, note_ids=(), paths=()) -> dict:
        """Forget notes for good (a purge): their file stats and access counts are deleted,
        then the database is rebuilt (VACUUM) and the write-ahead log emptied, so that no
        freed page of `state.db`, `-wal` or `-journal` still holds their paths.
        Returns `{"rows_removed", "vacuumed"}`; `vacuumed` is False when another process
        kept the log busy (its old pages are overwritten by later writes)."""
        with self._lock:
            with self._conn:
                removed = sum(self._conn.execute("DELETE FROM files WHERE path = ?", (p,)).rowcount
                              for p in paths)
                removed += sum(self._conn.execute("DELETE FROM access WHERE note_id = ?", (i,)).rowcount
                               for i in note_ids)
            self._conn.execute("PRAGMA secure_delete=ON")
            try:
                self._conn.execute("VACUUM")
                busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.OperationalError:  # another process holds the database
                busy = 1
            finally:
                self._conn.execute("PRAGMA secure_delete=OFF")
        return {"rows_removed": removed, "vacuumed": busy == 0}


def record_access(vault_root: str | Path, note_ids, when) -> None:
    """Module-level shortcut: `record_access(vault.root, ["01J..."], clock.now())`."""
    state = State(vault_root)
    try:
        state.record_access(note_ids, when)
    finally:
        state.close()


def access_stats(vault_root: str | Path, note_id: str) -> dict:
    state = State(vault_root)
    try:
        return state.access_stats(note_id)
    finally:
        state.close()
