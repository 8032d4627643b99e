"""The one change path: every change vaultmem makes to the notes of a vault goes through
`vault_change` (add, extract, correct, forget, gc, rollback), and the daemon's commits of
the user's own edits keep clear of it.

    >>> with vault_change(vault, "vaultmem: add fact 'Tea'", "add", indexer=indexer) as ch:  # doctest: +SKIP
    ...     ch.write("Memory/Facts/Tea.md", text)
    >>> ch.result()                                                                  # doctest: +SKIP
    {'commit': '3f2a...'}

The policy, the same for every command:
- Nothing is written in a repository vaultmem cannot commit in (a merge or rebase under
  way, a detached HEAD, no repository): HistoryError, and nothing was changed.
- Each path is recorded before it changes (its bytes, or that it did not exist). A failure
  inside the block puts every recorded path back as it was (notes it created are removed,
  changed ones get their bytes back; temp files never stay) and is raised as a
  VaultmemError saying what failed and that nothing was changed (an OSError becomes
  ChangeFailed, never a raw traceback).
- On a clean exit the paths that really changed are indexed, then committed, exactly them,
  as vaultmem, with a message that lists each note and its kind of change.
- A commit that fails (another git process holds index.lock past the timeout, a read-only
  `.git`) keeps the change: it is on disk and indexed, `ch.warning` says so, and a journal
  in `.vaultmem/changes/` holds its message. vaultmem commits it, as its own with that
  message, before its next change, from the daemon's chores, or in `vaultmem reindex`.
- While a change is under way its journal lists the paths it touched: the daemon holds
  back its commit of user edits to those paths, and commits a killed process's leftovers
  as vaultmem's (their message says the change was interrupted), never as the user's.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path

from vaultmem.errors import ChangeFailed, HistoryError, VaultmemError
from vaultmem.history import git as history
from vaultmem.store.files import atomic_write

JOURNALS = "changes"            # under .vaultmem/
OPEN, PENDING = ".open", ".pending"
_sequence = itertools.count(1)
_journal_lock = threading.Lock()  # one commit of journals at a time per process


class VaultChange:
    """One change to the vault under way; see the module docstring. Paths are vault-relative."""

    def __init__(self, vault, message: str, action: str, *, indexer=None, run: str | None = None,
                 source: str | None = None):
        self.vault = vault
        self.message = message      # may be set inside the block, once the change is known
        self.action = action
        self.run = run
        self.source = source
        self.indexer = indexer
        self.commit: str | None = None
        self.warning: str | None = None
        self._before: dict[str, tuple[bytes | None, int | None]] = {}
        self._journal: Path | None = None

    # --- writing ---------------------------------------------------------------------------
    def write(self, rel: str, text: str, *, expected: bytes | None = None) -> None:
        """Replace (or create) a note atomically; `expected`: only if it still holds those bytes."""
        self.record(rel)
        atomic_write(self.vault.abs(rel), text, expected=expected)

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Replace (or create) a file with exactly these bytes (a BOM, CRLF kept)."""
        self.record(rel)
        atomic_write(self.vault.abs(rel), data)

    def create(self, folder: Path, title: str, text: str) -> str:
        """A new note under a free name in `folder`; returns its vault path."""
        path = self.vault.write_new(folder, title, text)
        return self.created(self.vault.rel(path))

    def delete(self, rel: str) -> None:
        self.record(rel)
        self.vault.abs(rel).unlink(missing_ok=True)

    def rename(self, old: str, new: str) -> None:
        """Move a note; never over another file."""
        target = self.vault.abs(new)
        if target.exists():
            raise ChangeFailed(f"cannot move {old} to {new}: a file of that name exists")
        self.record(old)
        self.record(new)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.vault.abs(old), target)

    # --- writes done by helpers (write.apply, memories.update_note) -------------------------
    def record(self, rel: str) -> str:
        """Remember `rel` as it is now, before a helper changes it."""
        rel = self.vault.rel(self.vault.abs(rel))
        if rel not in self._before:
            path = self.vault.abs(rel)
            try:
                self._before[rel] = (path.read_bytes(), path.stat().st_mode & 0o777)
            except FileNotFoundError:
                self._before[rel] = (None, None)
            self._note_in_journal(rel)
        return rel

    def created(self, rel: str) -> str:
        """A note a helper has just created (it did not exist before)."""
        rel = self.vault.rel(self.vault.abs(rel))
        if rel not in self._before:
            self._before[rel] = (None, None)
            self._note_in_journal(rel)
        return rel

    def save_pending(self, rels) -> None:
        """Commit the user's uncommitted edits to these paths (as theirs) before changing them."""
        from vaultmem.history.git import save_pending_edits
        from vaultmem.history.repo import Repo

        with Repo(self.vault.root) as repo:
            save_pending_edits(repo, sorted(set(rels)))

    # --- what changed ------------------------------------------------------------------------
    @property
    def changed(self) -> list[str]:
        """Recorded paths whose content differs now from before the change."""
        out = []
        for rel, (data, _mode) in self._before.items():
            path = self.vault.abs(rel)
            now = path.read_bytes() if path.is_file() else None
            if now != data:
                out.append(rel)
        return sorted(out)

    def result(self) -> dict:
        """`{"commit": sha or None}` plus `"warning"` when the commit or the index failed."""
        return add_warning({"commit": self.commit}, self.warning)

    # --- the steps -----------------------------------------------------------------------------
    def _begin(self) -> None:
        from vaultmem.history.repo import Repo

        with Repo(self.vault.root) as repo:
            repo.check_state("nothing was changed")
        # An earlier change whose commit failed is committed first, so that its message
        # describes it and not this change too.
        commit_journaled(self.vault)

    def _finish(self) -> None:
        changed = self.changed
        if not changed:
            self._close_journal()
            return
        problems = []
        if self.indexer is not None:
            try:
                self.indexer.sync([self.vault.abs(rel) for rel in changed])
            except Exception as exc:  # LanceDB raises many kinds; the index is rebuilt from the vault
                problems.append(f"the index could not be updated ({type(exc).__name__}: {exc}) — "
                                "run `vaultmem reindex`")
        try:
            self.commit = history.commit(self.vault.root, changed, self.message, self.action, self.run,
                                         self.source)
        except Exception as exc:  # git trouble: the change stays, journaled for a later commit
            self._keep_pending(changed, exc)
            problems.append(f"git could not record this change ({exc}); it is saved in the vault"
                            f"{' and indexed' if self.indexer is not None else ''}, and vaultmem "
                            "commits it as its own before its next change (or run `vaultmem reindex`)")
        else:
            self._close_journal()
        self.warning = "; ".join(problems) or None

    def _undo(self) -> list[tuple[str, str]]:
        """Put every recorded path back as it was; returns (path, reason) for those that
        could not be."""
        failed = []
        for rel, (data, mode) in reversed(list(self._before.items())):
            path = self.vault.abs(rel)
            try:
                now = path.read_bytes() if path.is_file() else None
                if now == data:
                    continue
                if data is None:
                    path.unlink(missing_ok=True)
                else:
                    atomic_write(path, data, mode=mode)
            except OSError as exc:
                failed.append((rel, (exc.strerror or str(exc)).lower()))
        return failed

    # --- the journal ---------------------------------------------------------------------------
    def _note_in_journal(self, rel: str) -> None:
        if self._journal is None:
            folder = self.vault.state_dir / JOURNALS
            folder.mkdir(parents=True, exist_ok=True)
            self._journal = folder / f"{os.getpid()}-{next(_sequence)}{OPEN}"
            head = {"pid": os.getpid(), "message": self.message, "action": self.action,
                    "run": self.run, "source": self.source}
            self._journal.write_text(json.dumps(head) + "\n", encoding="utf-8")
        with open(self._journal, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"path": rel}) + "\n")

    def _keep_pending(self, paths, exc) -> None:
        entry = {"message": self.message, "action": self.action, "run": self.run,
                 "source": self.source, "paths": paths, "error": str(exc)}
        target = (self._journal or self.vault.state_dir / JOURNALS / f"{os.getpid()}-{next(_sequence)}")
        atomic_write(target.with_suffix(PENDING), json.dumps(entry) + "\n")
        self._close_journal()

    def _close_journal(self) -> None:
        if self._journal is not None:
            self._journal.unlink(missing_ok=True)
            self._journal = None


@contextmanager
def vault_change(vault, message: str, action: str, *, indexer=None, run: str | None = None,
                 source: str | None = None):
    """Make one change to the vault: all of it, indexed and committed, or none of it.
    `message` is the commit's subject (settable as `ch.message` inside the block), `action`
    its `Vaultmem-Action` trailer, `run`/`source` its other trailers; `indexer` (an
    `ingest.Indexer`) indexes the changed notes. See the module docstring for the policy."""
    change = VaultChange(vault, message, action, indexer=indexer, run=run, source=source)
    change._begin()
    try:
        yield change
    except BaseException as exc:
        left = change._undo()
        if left:  # committed later as vaultmem's, never taken for the user's edit
            change.message += " (failed part-way: what could not be put back)"
            change._keep_pending([rel for rel, _reason in left], exc)
        change._close_journal()
        if isinstance(exc, OSError):
            raise ChangeFailed(_plain(vault, exc, left)) from exc
        if isinstance(exc, VaultmemError):
            exc.args = (_plain(vault, exc, left),)
        raise
    change._finish()


def add_warning(result: dict, warning: str | None) -> dict:
    """`result` with `warning` added to its `"warning"` (after the one it holds, joined by
    "; "), or as it was when there is none: the one way a warning reaches a result, be it
    a change's (kept but not committed or indexed, `ch.warning`) or a read's (answered
    before the daemon's startup scan ended)."""
    if warning:
        result["warning"] = f"{result['warning']}; {warning}" if result.get("warning") else warning
    return result


def _plain(vault, exc: BaseException, left: list[tuple[str, str]]) -> str:
    """What failed, in a sentence, and what the failure left."""
    if isinstance(exc, OSError):
        where = _where(vault, exc.filename)
        reason = (exc.strerror or str(exc)).lower()
        text = f"vaultmem could not write {where}: {reason}" if where else f"vaultmem could not write: {reason}"
    else:
        text = str(exc)
    if left:
        shown = ", ".join(f"{rel} ({reason})" for rel, reason in left)
        return f"{text.rstrip('.')}; and could not put back {shown} — `vaultmem diff` shows them"
    if "nothing was changed" in text:
        return text
    return f"{text.rstrip('.')}; nothing was changed"


def _where(vault, filename) -> str | None:
    """The vault path an OSError names (a temp file stands for its folder)."""
    if not filename:
        return None
    path = Path(os.fsdecode(filename))
    if path.name.startswith(".vaultmem-"):
        path = path.parent
    try:
        return vault.rel(path)
    except VaultmemError:
        return str(path)


# --- committing -------------------------------------------------------------------------------

def _journals(vault) -> list[Path]:
    folder = vault.state_dir / JOURNALS
    return sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime_ns) if folder.is_dir() else []


def _read(journal: Path) -> dict | None:
    """A journal's message and paths, or None when it is unreadable or not a journal."""
    try:
        text = journal.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        if journal.suffix == PENDING:
            return json.loads(text)
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError:
        return None
    if journal.suffix != OPEN or not lines:
        return None
    return dict(lines[0], paths=[entry["path"] for entry in lines[1:] if "path" in entry])


def _live(journal: Path, entry: dict) -> bool:
    from vaultmem.store.files import pid_alive

    return journal.suffix == OPEN and pid_alive(int(entry.get("pid") or 0))


def held_paths(vault) -> tuple[set[str], set[str]]:
    """(paths of changes under way, paths of changes waiting for their commit): the daemon
    never commits either as the user's edit."""
    busy, waiting = set(), set()
    for journal in _journals(vault):
        entry = _read(journal)
        if entry is not None:
            (busy if _live(journal, entry) else waiting).update(entry.get("paths", []))
    return busy, waiting


def commit_journaled(vault) -> list[dict]:
    """Commit, as vaultmem's and with their own messages, the changes whose commit failed
    and what killed vaultmem processes left written; each journal goes once committed.
    Returns `[{"message", "commit"}]` for those committed; one that still fails stays."""
    done = []
    with _journal_lock:
        for journal in _journals(vault):
            entry = _read(journal)
            if entry is None or _live(journal, entry):
                continue
            message = entry.get("message") or "vaultmem: change"
            if journal.suffix == OPEN:
                message += " (interrupted: what it had written)"
            paths = [p for p in entry.get("paths", []) if isinstance(p, str)]
            try:
                sha = history.commit(vault.root, paths, message, entry.get("action") or "change",
                                     entry.get("run"), entry.get("source")) if paths else None
            except (HistoryError, OSError):
                continue
            journal.unlink(missing_ok=True)
            done.append({"message": message, "commit": sha})
    return done
