"""A memory's life after it is written: `rollback`, `forget`, `gc`, `correct`, and the `log`."""

from __future__ import annotations


class Lifecycle:
    """`Memory`'s changes to what is remembered, and the audit trail of them."""

    def rollback(self, ref: str | None = None, to: str | None = None, run: str | None = None,
                 user: str | None = None) -> dict:
        """Restore a note to revision `to`, or undo everything extraction run `run` wrote
        (superseded memories become active again). Each is one new commit; history is kept.

        >>> first = Memory(vault).history("Lives in Lisbon")["versions"][-1]["rev"]   # doctest: +SKIP
        >>> Memory(vault).rollback("Lives in Lisbon", to=first)["note"]              # doctest: +SKIP
        'Memory/Facts/Lives in Lisbon.md'
        """
        from vaultmem.errors import HistoryError
        from vaultmem.history import rollback

        if run:
            from vaultmem.memory.memories import check_run_owner

            check_run_owner(self.vault, run, self._owners(user))
            return rollback.rollback_run(self.vault, run, indexer=self.indexer)
        if not ref or not to:
            raise HistoryError("give NOTE --to REV, or --run RUN — `vaultmem history NOTE` lists revisions")
        return rollback.rollback_note(self.vault, self._note_rel(ref, user, change=True), to,
                                      indexer=self.indexer)

    def forget(self, ref: str, purge: bool = False, force: bool = False,
               user: str | None = None) -> dict:
        """Archive a memory (out of retrieval, kept in history); `purge` erases it instead:
        from the vault, every commit, the index, state.db and logs, with the words of the
        session turns it came from. Returns the purge's receipt (see `lifecycle.purge`).
        A purge is sent to the vault's daemon when one runs (the index's one writer).

        >>> Memory(vault).forget("Started learning Portuguese")["status"]   # doctest: +SKIP
        'archived'
        """
        from vaultmem.memory import forget

        if purge:
            result = self._forward("forget", {"ref": ref, "purge": True, "force": force,
                                              "user": user or self._scope})
            if result is not None:
                return result
        rel = self._note_rel(ref, user, change=True)
        if purge:
            from vaultmem.memory.lifecycle import purge as purge_memory

            return purge_memory(self, rel, force=force)
        return forget.forget(self.vault, rel, indexer=self.indexer)

    def gc(self, dry_run: bool = False, user: str | None = None) -> dict:
        """Archive low-importance memories not recalled for `[gc] archive_after_days`.
        `{"dry_run", "archived": [paths], "plan": [{"path", "reason", ...}]}`."""
        from vaultmem.memory.lifecycle import gc

        return gc(self, dry_run=dry_run, user=user)

    def correct(self, ref: str, text: str, user: str | None = None) -> dict:
        """Supersede a memory with its corrected text; the old version stays, superseded.

        >>> Memory(vault).correct("Lives in Lisbon", "The user lives in Porto")  # doctest: +SKIP
        {'action': 'superseded', 'path': 'Memory/Facts/The user lives in Shanghai.md', ...}
        """
        from vaultmem.memory.lifecycle import correct

        return correct(self, ref, text, user=user or self._scope)

    def log(self, limit: int = 50, run: str | None = None, user: str | None = None) -> list:
        """The audit trail, newest first: `[{"date", "action", "what", "run", "message", "paths"}]`
        from git's commits and state.db's events (purges). `user`: only that namespace's notes."""
        from vaultmem.memory.lifecycle import audit_log

        return audit_log(self.vault, limit=limit, run=run, user=user or self._scope)
