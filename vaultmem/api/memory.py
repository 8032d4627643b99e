"""`Memory`: one vault opened, its parts loaded once (model, index, searcher) and shared,
the one change path, and whose notes a call may read or change.

Its methods come by area from the classes it is made of (`notes`, `retrieval`, `upkeep`,
`writes`, `lifecycle`, `export`); what they share is here.
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.api.export import Export
from vaultmem.api.lifecycle import Lifecycle
from vaultmem.api.notes import Notes
from vaultmem.api.retrieval import Retrieval
from vaultmem.api.upkeep import Upkeep
from vaultmem.api.writes import Writes
from vaultmem.store.config import load_config
from vaultmem.store.vault import Vault, find_vault


def _keep_state_out_of_git(root: Path) -> None:
    """`.vaultmem/` ignores itself before anything is written in it: on a fresh clone (the
    `.gitignore` does not travel) a search or an add would otherwise leave the index where
    a `git add -A` commits it. A read-only vault is left as it is."""
    from vaultmem.store.init import ignore_state

    try:
        ignore_state(root)
    except OSError:
        pass

class Memory(Notes, Retrieval, Upkeep, Writes, Lifecycle, Export):
    """A vault's memory. `vault` defaults to $VAULTMEM_VAULT or the nearest vault upward."""

    def __init__(self, vault: str | Path | None = None, user: str | None = None, embedder=None,
                 serving: bool = False):
        """`embedder`: an already loaded `vaultmem.index.embed.Embedder` to share (one model for
        several vaults, as the benchmarks do); loaded on first use otherwise. `serving`: this
        is the daemon's own Memory (it never forwards a request to a daemon)."""
        root = find_vault(vault, Path.cwd())
        self.vault = Vault(root, load_config(root))
        _keep_state_out_of_git(root)
        self.user = user or self.vault.config.user
        # A Memory opened for one user reads only that namespace; without one, reads that
        # take no `user` see the whole vault (the vault owner's view).
        self._scope = user
        self._indexer = None
        self._embedder = embedder
        self._serving = serving

    # --- shared lazily-loaded parts -------------------------------------------------
    @property
    def embedder(self):
        """The sentence-transformers model (loaded on first use, then kept warm)."""
        if self._embedder is None:
            from vaultmem.index.embed import embedder_for

            self._embedder = embedder_for(self.vault.config)
        return self._embedder

    @property
    def model_loaded(self) -> bool:
        """Whether the model is loaded (a status report must not load it)."""
        return self._embedder is not None

    @property
    def indexer(self):
        """The ingest pipeline bound to this vault and model."""
        if self._indexer is None:
            from vaultmem.index.ingest import Indexer

            self._indexer = Indexer(self.vault, embedder_factory=lambda: self.embedder)
        return self._indexer

    def snapshot(self, user: str | None = None):
        """The index's rows and vectors as they are now (None before the first index). Of a
        table past `ANN_AFTER_ROWS`, which is not held in memory, only `user`'s memories."""
        try:
            if user is not None and self.indexer.index.large:
                return self._vectors_of(user)
            return self.indexer.index.snapshot()
        except Exception:  # no index yet: callers dedup by text and slot only
            return None

    def _vectors_of(self, user: str):
        """The index's vectors of `user`'s active memories (None before the first index)."""
        from vaultmem.index.table import sql_in

        try:
            return self.indexer.index.vectors_of(f"{sql_in('user', [user])} AND status = 'active' "
                                                 f"AND type != 'session'")
        except Exception:  # no index yet: callers dedup by text and slot only
            return None

    def change(self, message: str, action: str, run: str | None = None, source: str | None = None):
        """`with memory.change("vaultmem: ...", "add") as ch:` — the one way to change the
        vault's notes: written atomically, indexed and committed on exit, or put back on a
        failure (see `vaultmem.history.change`)."""
        from vaultmem.history.change import vault_change

        return vault_change(self.vault, message, action, indexer=self.indexer, run=run, source=source)

    # --- who may read or change what ---------------------------------------------------
    def _readers(self, user: str | None) -> set | None:
        """Namespaces a read for `user` may see: its own, plus `shared` when configured;
        None (no limit) when neither the call nor this Memory names a user."""
        user = user or self._scope
        if not user:
            return None
        return {user} | ({"shared"} if self.vault.config.share_shared else set())

    def _owners(self, user: str | None) -> set | None:
        """Namespaces whose notes a change for `user` may touch: its own only (None: any,
        when neither the call nor this Memory names a user)."""
        user = user or self._scope
        return {user} if user else None

    def _note_rel(self, ref: str, user: str | None = None, change: bool = False) -> str:
        """NOTE as a vault path, through the one resolver (`memories.resolve_note`): a path
        no longer on disk (rolled back, deleted) is still accepted, so its history can be
        read and restored. With a `user` (or a Memory opened for one), another namespace's
        note is "not found"; reading also reaches `shared`, changing only the user's own."""
        from vaultmem.memory.memories import resolve_note

        users = self._owners(user) if change else self._readers(user)
        return resolve_note(self.vault, ref, users, gone=True)

    def _forward(self, op: str, args: dict):
        """The daemon's result for `op` (see `vaultmem.ipc.protocol`), or None when no
        daemon serves it and the work is done here. The daemon's own Memory never forwards."""
        if self._serving:
            return None
        from vaultmem.ipc.client import try_request

        return try_request(self.vault.root, op, args)
