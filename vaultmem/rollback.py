"""Rollback: restore a note to an earlier version, or undo everything one extraction run
wrote. Each is one new commit; nothing is removed from history, and uncommitted edits to
the files about to change are committed first (as the user's) so that nothing is lost."""

from __future__ import annotations

import os
from pathlib import Path

from vaultmem.errors import HistoryError
from vaultmem.history import (TRAILERS, VAULTMEM_IDENTITY, Repo, commit_paths, format_message,
                              note_versions, run_commits, save_pending_edits, version_at)


def _write_bytes(path: Path, data: bytes) -> None:
    """Byte-exact atomic restore (keeps a BOM and CRLF line ends as they were committed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".vaultmem-{os.getpid()}-{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def rollback_note(vault_root, rel_path: str, rev: str) -> dict:
    """Restore a note's content as of `rev` in a new commit (history is kept). If the note
    was renamed or archived since, it goes back to the path it had then."""
    with Repo(vault_root) as repo:
        repo.check_state("nothing was changed")
        versions = note_versions(repo, rel_path)
        sha, old_path, data = version_at(repo, versions, rel_path, rev)
        target = old_path
        if old_path != rel_path and (repo.top / repo.to_repo(old_path)).exists():
            target = rel_path  # the old name belongs to another note now: restore in place
        touched = sorted({rel_path, target})
        save_pending_edits(repo, touched)
        _write_bytes(repo.top / repo.to_repo(target), data)
        if target != rel_path:
            (repo.top / repo.to_repo(rel_path)).unlink(missing_ok=True)
        message = format_message(f"vaultmem: roll back '{Path(target).stem}' to {sha[:8]}", "rollback")
        new = commit_paths(repo, touched, message, VAULTMEM_IDENTITY)
        return {"note": target, "rev": sha, "commit": new, "restored": [target],
                "removed": [rel_path] if target != rel_path else []}


def rollback_run(vault_root, run_id: str) -> dict:
    """Undo everything one extraction run wrote, in one new commit: notes it created are
    removed, notes it changed (superseded ones included) get their earlier content back."""
    with Repo(vault_root) as repo:
        repo.check_state("nothing was changed")
        commits = run_commits(repo, run_id)
        if not commits:
            raise HistoryError(f"no commit carries `{TRAILERS['run']}: {run_id}` on this branch — "
                               "`vaultmem log` lists runs")
        base = repo.run("rev-parse", "--verify", "-q", f"{commits[0]}^", ok_codes=(1, 128)).strip() or None
        touched = set()
        for sha in commits:
            names = repo.run("diff-tree", "--root", "-r", "--no-commit-id", "--name-only", "-z",
                             "--no-renames", sha)
            touched.update(n for n in names.split("\0") if n)
        rels = sorted(repo.to_vault(p) for p in touched if not repo.to_vault(p).startswith("../"))
        later = repo.run("log", "--format=", "--name-only", "-z", f"{commits[-1]}..HEAD", "--",
                         *[repo.to_repo(r) for r in rels]) if rels else ""
        save_pending_edits(repo, rels)
        restored, removed = [], []
        for rel in rels:
            path = repo.top / repo.to_repo(rel)
            before = repo.blob(base, repo.to_repo(rel)) if base else None
            if before is None:
                if path.exists():
                    path.unlink()
                    removed.append(rel)
            elif not path.is_file() or path.read_bytes() != before:
                _write_bytes(path, before)
                restored.append(rel)
        message = format_message(
            f"vaultmem: roll back run {run_id} ({len(restored)} restored, {len(removed)} removed)",
            "rollback-run", run=run_id)
        new = commit_paths(repo, rels, message, VAULTMEM_IDENTITY)
        return {"run": run_id, "commit": new, "undone": commits, "restored": restored, "removed": removed,
                "later_changes": sorted({repo.to_vault(p) for p in later.split("\0") if p})}

