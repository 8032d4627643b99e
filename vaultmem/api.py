"""The Python API: `Memory`, the one object the CLI, the daemon and the MCP server sit on.

    >>> from vaultmem import Memory                      # doctest: +SKIP
    >>> mem = Memory("~/Obsidian/MyVault")               # doctest: +SKIP
    >>> mem.add("The user prefers tea over coffee", type="preference")   # doctest: +SKIP
    {'action': 'created', 'id': '01J...', 'path': 'Memory/Preferences/...md', 'reason': '...'}
    >>> mem.search("what does the user drink?")["hits"][0]["text"]       # doctest: +SKIP

Every method returns plain JSON-able values (dicts, lists, strings), so the daemon can
send them over its socket and the CLI prints the same output whichever side answered.
Methods are grouped by area; each area's logic lives in its own module.
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.config import load_config
from vaultmem.vault import Vault, find_vault


def init(path: str | Path) -> dict:
    """Create the layout, config, .gitignore entries and a git repo (if none) in `path`."""
    from vaultmem.vault import init_vault

    result = init_vault(path)
    try:
        from vaultmem import history
    except ImportError:
        return result
    created = history.ensure_repo(Path(result["vault"]))
    result["git"] = "created a repository" if created else "using the existing repository"
    history.commit(Path(result["vault"]), [".gitignore"], "vaultmem: init (ignore .vaultmem/ state)",
                   action="init")
    return result


class Memory:
    """A vault's memory. `vault` defaults to $VAULTMEM_VAULT or the nearest vault upward."""

    def __init__(self, vault: str | Path | None = None, user: str | None = None):
        root = find_vault(vault, Path.cwd())
        self.vault = Vault(root, load_config(root))
        self.user = user or self.vault.config.user
        self._indexer = None
        self._embedder = None

    # --- shared lazily-loaded parts -------------------------------------------------
    @property
    def embedder(self):
        """The sentence-transformers model (loaded on first use, then kept warm)."""
        if self._embedder is None:
            from vaultmem.embed import Embedder

            self._embedder = Embedder(self.vault.config.model)
        return self._embedder

    @property
    def indexer(self):
        """The ingest pipeline bound to this vault and model."""
        if self._indexer is None:
            from vaultmem.ingest import Indexer

            self._indexer = Indexer(self.vault, embedder_factory=lambda: self.embedder)
        return self._indexer

    # --- foundation: notes ----------------------------------------------------------
    def show(self, ref: str, at: str | None = None, user: str | None = None) -> dict:
        """A note in full (`at`: as it was at a git revision).

        >>> Memory(vault).show("Cutting back on coffee")["type"]   # doctest: +SKIP
        'preference'
        """
        from vaultmem import memories

        if at:
            return self.show_at(ref, at)
        return memories.show(self.vault, ref, user=user)

    def list(self, type: str | None = None, user: str | None = None,
             status: str | None = None) -> dict:
        """`{"notes": [summary, ...], "errors": [{"path", "reason"}, ...]}`."""
        from vaultmem import memories

        notes, errors = memories.list_notes(self.vault, type=type, user=user, status=status)
        return {"notes": notes, "errors": errors}

    # --- read path: index, search, context, doctor, stats ---------------------------

    # --- write path: add, extract ----------------------------------------------------

    # --- history: git ------------------------------------------------------------------

    # --- lifecycle: gc, correct, log ---------------------------------------------------

    # --- agents: export ------------------------------------------------------------------
