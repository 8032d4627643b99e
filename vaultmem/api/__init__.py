"""The Python API: `Memory`, the one object the CLI, the daemon and the MCP server sit on,
and `init`, which makes a folder a vault.

    >>> from vaultmem import Memory                      # doctest: +SKIP
    >>> mem = Memory("~/Obsidian/MyVault")               # doctest: +SKIP
    >>> mem.add("The user prefers tea over coffee", type="preference")   # doctest: +SKIP
    {'action': 'created', 'id': '01J...', 'path': 'Memory/Preferences/...md', 'reason': '...'}
    >>> mem.search("what does the user drink?")["hits"][0]["text"]       # doctest: +SKIP

Every method returns plain JSON-able values (dicts, lists, strings), so the daemon can
send them over its socket and the CLI prints the same output whichever side answered.
Methods are grouped by area, one module each (`notes`, `retrieval`, `upkeep`, `writes`,
`lifecycle`, `export`), and each area's logic lives in its own package below; `memory`
holds what they share. `Memory` is loaded when first asked for (`vaultmem.public`).
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.public import lazy_names
from vaultmem.store.config import load_config
from vaultmem.store.vault import Vault


def init(path: str | Path, model: str | None = None) -> dict:
    """Create the layout, config, git's ignores and a git repo (if none) in `path`; the
    vault's root gets nothing but `.vaultmem/`, the memory folder and `.git/` (a new repo).
    `model`: the embedding model (default: the one that suits the vault's language).
    `model_clis`: the model CLIs on PATH and the `[llm] command` for each (none is turned on:
    nothing leaves the machine until the person sets `enabled = true`)."""
    from vaultmem.extract import model_clis
    from vaultmem.history import git as history
    from vaultmem.store.init import init_vault

    result = init_vault(path, model=model)
    created = history.ensure_repo(Path(result["vault"]))
    result["git"] = "created a repository" if created else "using the existing repository"
    root = Path(result["vault"])
    memory_root = load_config(root).memory_root
    from vaultmem.sync import remote as sync

    if sync.install_attributes(Vault(root)):
        result["created"].append(f"{memory_root}/.gitattributes")
    result["created"] += sync.ensure_ignores(root)
    if sync.register_driver(root):
        result["merge_driver"] = "registered in .git/config (memory notes merge by property)"
    # The memory notes already there become the first recorded version of each; the memory
    # folder's .gitattributes goes with them. Nothing of the person's is committed.
    history.commit(root, [memory_root],
                   "vaultmem: init (record existing memory notes, merge memory notes by property)",
                   action="init")
    result["model_clis"] = model_clis()
    return result


_PUBLIC = {
    "Memory": "memory",
}
__all__ = sorted([*_PUBLIC, "init"])  # `init` is defined here
__getattr__ = lazy_names(__name__, _PUBLIC)
