"""Keeping the index and the vault sound: `reindex`, `recover`, `doctor`, `repair`, `stats`."""

from __future__ import annotations


class Upkeep:
    """`Memory`'s upkeep: the index brought up to date, what a killed run left cleared, drift found and repaired."""

    def reindex(self, full: bool = False, paths=None, progress=None) -> dict:
        """Bring the index up to date (`full`: rebuild). `progress(done, total)` per batch.
        A whole-vault pass first clears what a killed vaultmem process left (`recover`).
        Done by the vault's daemon when one runs (the index's one writer; no progress then)."""
        forwarded = self._forward("reindex", {"full": full, "paths": paths})
        if forwarded is not None:
            return forwarded
        if paths is None:
            self.recover()
        return self.indexer.sync(paths=paths, full=full, progress=progress).to_dict()

    def recover(self) -> dict:
        """Remove what a vaultmem process killed mid-write left behind: its temp files in the
        memory folders and its `.git/index.lock` (never another process's lock); then commit,
        as vaultmem's, changes whose commit failed or was cut short (`change.commit_journaled`).
        `{"temp_files": [paths], "git": [names], "commits": [{"message", "commit"}]}`."""
        from vaultmem.history import lock as history
        from vaultmem.history.change import commit_journaled
        from vaultmem.store.vault import remove_stale_temp_files

        left = {"temp_files": remove_stale_temp_files(self.vault),
                "git": history.clear_stale_locks(self.vault.root)}
        return dict(left, commits=commit_journaled(self.vault))

    def doctor(self) -> dict:
        """Drift between vault and index, unreadable notes, broken links, contradictions."""
        from vaultmem.doctor import doctor

        return doctor(self.vault)

    def repair(self, touching=None) -> dict:
        """What `doctor --fix` does for a vault synced from several devices: the merge
        driver registered in `.git/config` and git's ignores written (`.vaultmem/.gitignore`,
        `.trash/` in `.git/info/exclude`: a fresh clone lacks them), then duplicates,
        crossing supersedes and one-way supersede links repaired, one commit each (see
        `vaultmem.sync.reconcile`); `touching`: only repairs involving those vault paths (what a
        merge brought). `{"repairs", "commits", "merge_driver", "ignores"}`."""
        from vaultmem.sync import reconcile
        from vaultmem.sync import remote as sync

        registered = sync.register_driver(self.vault.root)
        ignores = sync.ensure_ignores(self.vault.root)
        return dict(reconcile.repair(self, touching),
                    merge_driver="registered in .git/config" if registered else None,
                    ignores=ignores)

    def stats(self) -> dict:
        """Notes by type and status, and the index's size."""
        from vaultmem.doctor import stats

        return stats(self.vault)
