"""Rollback: restore a note to an earlier version, or undo everything one extraction run
wrote. Each is one change (`change.vault_change`) and one new commit; nothing is removed
from history, and uncommitted edits to the files about to change are committed first (as
the user's) so that nothing is lost."""

from __future__ import annotations

from pathlib import Path

from vaultmem.errors import HistoryError
from vaultmem.history.change import vault_change
from vaultmem.history.log import note_versions, run_commits, version_at
from vaultmem.history.messages import TRAILERS
from vaultmem.history.repo import Repo
from vaultmem.store.vault import Vault


def _as_vault(vault) -> Vault:
    return vault if isinstance(vault, Vault) else Vault(Path(vault))


def rollback_note(vault, rel_path: str, rev: str, indexer=None) -> dict:
    """Restore a note's content as of `rev` in a new commit (history is kept). If the note
    was renamed or archived since, it goes back to the path it had then. `vault`: a Vault or
    its folder; `indexer` indexes the restored note."""
    vault = _as_vault(vault)
    with Repo(vault.root) as repo:
        repo.check_state("nothing was changed")
        versions = note_versions(repo, rel_path)
        sha, old_path, data = version_at(repo, versions, rel_path, rev)
    target = old_path
    if old_path != rel_path and vault.abs(old_path).exists():
        target = rel_path  # the old name belongs to another note now: restore in place
    with vault_change(vault, f"vaultmem: roll back '{Path(target).stem}' to {sha[:8]}", "rollback",
                      indexer=indexer) as ch:
        ch.save_pending(sorted({rel_path, target}))
        ch.write_bytes(target, data)
        if target != rel_path:
            ch.delete(rel_path)
    return {"note": target, "rev": sha, "restored": [target],
            "removed": [rel_path] if target != rel_path else [], **ch.result()}


def rollback_run(vault, run_id: str, indexer=None) -> dict:
    """Undo everything one extraction run wrote, in one new commit: notes it created are
    removed, notes it changed (superseded ones included) get their earlier content back."""
    vault = _as_vault(vault)
    with Repo(vault.root) as repo:
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
        later = sorted({repo.to_vault(p) for p in later.split("\0") if p})
        before = {rel: repo.blob(base, repo.to_repo(rel)) if base else None for rel in rels}
    restored, removed = [], []
    with vault_change(vault, f"vaultmem: roll back run {run_id}", "rollback-run", run=run_id,
                      indexer=indexer) as ch:
        ch.save_pending(rels)
        for rel in rels:
            path = vault.abs(rel)
            if before[rel] is None:
                if path.exists():
                    ch.delete(rel)
                    removed.append(rel)
            elif not path.is_file() or path.read_bytes() != before[rel]:
                ch.write_bytes(rel, before[rel])
                restored.append(rel)
        ch.message = f"vaultmem: roll back run {run_id} ({len(restored)} restored, {len(removed)} removed)"
    return {"run": run_id, "undone": commits, "restored": restored, "removed": removed,
            "later_changes": later, **ch.result()}
