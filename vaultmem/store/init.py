"""`vaultmem init`: a new vault's layout, `.vaultmem/config.toml` (with the embedding model
that suits its language), the dashboard and `.vaultmem/.gitignore`; safe to run again.

Nothing is written at the vault's root, which is the person's: `.vaultmem/` keeps itself out
of git with a `.gitignore` of its own (`ignore_state`), the merge driver's attributes live in
the memory folder (`vaultmem.sync.remote`), and Obsidian's `.trash/` is excluded in the
repository's `.git/info/exclude`. A vault made by an older vaultmem has vaultmem's lines in a
root `.gitignore` and `.gitattributes`: they are left as they are (they still work, and other
devices may still rely on them), and nothing is added to them.
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.errors import VaultNotFound
from vaultmem.store.config import DEFAULT_CONFIG_TOML, config_path, load_config, with_model
from vaultmem.store.dashboard import ensure_dashboard
from vaultmem.store.files import atomic_write
from vaultmem.store.layout import STATE_DIR, TYPE_FOLDERS
from vaultmem.store.vault import Vault

LAYOUT = tuple(TYPE_FOLDERS.values()) + ("Archive", "Inbox")
# `.vaultmem/.gitignore`: everything in the folder, this file too, stays out of git, so a
# `git add -A` (obsidian-git, a person's sync) never commits the index, logs or the socket.
STATE_GITIGNORE = "# vaultmem: its index, daemon state and logs stay out of git\n*\n"


def init_vault(path: Path | str, model: str | None = None) -> dict:
    """Create the layout, `.vaultmem/config.toml` and `.vaultmem/.gitignore`; the vault's root
    is left as it was (`api.init` adds the git repo if none and the merge attributes). Safe
    to run again: nothing that exists is overwritten, but for the embedding model when
    `model` names one. A new config gets `model`, else the one that suits the vault's
    language (`languages.pick_model`); `model` and `model_reason` in the result say which."""
    root = Path(path).expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise VaultNotFound(f"{root} is a file — give a folder for the vault")
    root.mkdir(parents=True, exist_ok=True)
    created = []
    state = root / STATE_DIR
    if not state.is_dir():
        state.mkdir()
        created.append(STATE_DIR + "/")
    if ignore_state(root):
        created.append(f"{STATE_DIR}/.gitignore")
    cfg = config_path(root)
    chosen = {}
    if not cfg.exists():
        from vaultmem.store.languages import EMPTY_VAULT, PICKED_FOR_EMPTY, pick_model

        picked, reason = (model, "asked for") if model else pick_model(root)
        atomic_write(cfg, with_model(DEFAULT_CONFIG_TOML, picked))
        created.append(f"{STATE_DIR}/config.toml")
        if not model and reason.startswith(EMPTY_VAULT):
            atomic_write(state / PICKED_FOR_EMPTY, reason + "\n")
        chosen = {"model": picked, "model_reason": reason}
    elif model and model != load_config(root).model:
        was = load_config(root).model
        atomic_write(cfg, with_model(cfg.read_text(encoding="utf-8"), model))
        chosen = {"model": model, "model_reason": f"asked for, was {was}: run `vaultmem reindex` "
                                                  "to rebuild the index with it (a running daemon: "
                                                  "`vaultmem daemon stop` first)"}
    config = load_config(root)
    vault = Vault(root, config)
    for name in LAYOUT:
        folder = vault.memory_dir / name
        if not folder.is_dir():
            folder.mkdir(parents=True)
            created.append(f"{config.memory_root}/{name}/")
    dashboard = ensure_dashboard(vault)
    if dashboard:
        created.append(dashboard)
    return {"vault": str(root), "created": created, "config": str(cfg),
            **(chosen or {"model": config.model}), "notes": notes_scope(vault)}


def ignore_state(vault_root: Path | str) -> bool:
    """Give `.vaultmem/` its own `.gitignore` (`*`: the folder ignores itself, wherever the
    vault sits in a repository, and before any repository exists); True if it was written.
    A `.gitignore` already there is kept as it is."""
    path = Path(vault_root) / STATE_DIR / ".gitignore"
    if path.exists():
        return False
    try:
        atomic_write(path, STATE_GITIGNORE, overwrite=False)
    except FileExistsError:   # another vaultmem process wrote it meanwhile
        return False
    return True


def notes_scope(vault: Vault) -> dict:
    """What of the person's own notes the index reads: `{"count", "globs", "exclude",
    "left_out"}` (`left_out`: what is never read, whatever the globs say)."""
    config = vault.config
    left_out = [f"{config.memory_root}/", f"{config.obsidian_dir}/", ".trash/"]
    if config.attachment_folder:
        left_out.append(f"{config.attachment_folder}/")
    left_out += [f"Obsidian's excluded {e}" for e in config.obsidian_excluded]
    return {"count": sum(1 for _ in vault.iter_user_notes()), "globs": list(config.notes),
            "exclude": list(config.exclude), "left_out": left_out}
