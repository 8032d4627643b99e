"""Bearer tokens for vaultmem on HTTP, kept hashed in `.vaultmem/`: one per user for each
client, the MCP server (`mcp`) and the Obsidian plugin's API (`obsidian`).

    >>> issue(root, "alice")["token"]          # doctest: +SKIP
    'vm_Xk3...'
    >>> user_for(root, "vm_Xk3...")            # doctest: +SKIP
    'alice'

A token opens one door only: an MCP token is refused by the plugin's API and the other way
round, and making a new token for one client leaves the user's other token working.

Each token acts for one user: every tool call made with it reads and writes that user's
memory only. The file (`.vaultmem/mcp_tokens.json`, mode 0600) holds the SHA-256 of each
token, never the token: `.vaultmem/` sits inside the vault folder, which people sync to
clouds and copy to backups, and a copy of the file must not let anyone in. So a token is
shown once, when it is made; a lost one is replaced (`--new`). A plain hash is enough: the
tokens are 256 random bits, nothing a guesser could search. Standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from datetime import datetime
from pathlib import Path

from vaultmem.errors import ConfigError, VaultmemError
from vaultmem.store.layout import STATE_DIR

TOKENS_NAME = "mcp_tokens.json"
PREFIX = "vm_"  # makes a leaked token recognisable to secret scanners (and to people)
_SHA256 = re.compile(r"[0-9a-f]{64}")
# What a token is for; an entry written before there were two has no "client": it is MCP's.
CLIENTS = ("mcp", "obsidian")
DEFAULT_CLIENT = "mcp"


def tokens_path(vault_root) -> Path:
    return Path(vault_root) / STATE_DIR / TOKENS_NAME


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def client_of(entry: dict) -> str:
    return entry.get("client") or DEFAULT_CLIENT


def load(vault_root) -> list[dict]:
    """The stored entries `{"user", "sha256", "created", "client"?}` ([] when no token was
    made)."""
    path = tokens_path(vault_root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the MCP tokens ({exc}) — delete the file and "
                          "run `vaultmem mcp token --new` for each user") from exc
    entries = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("user"), str)
            and _SHA256.fullmatch(str(e.get("sha256"))) and client_of(e) in CLIENTS
            for e in entries):
        raise ConfigError(f"{path}: not a vaultmem token file — delete it and run "
                          "`vaultmem mcp token --new` for each user")
    return entries


def _save(vault_root, entries: list[dict]) -> None:
    from vaultmem.store.files import atomic_write

    text = json.dumps({"tokens": entries}, indent=2) + "\n"
    atomic_write(tokens_path(vault_root), text, mode=0o600)  # 0600 from the temp file's birth


def _checked_user(user: str) -> str:
    if not user or user != user.strip() or any(ch.isspace() for ch in user):
        raise VaultmemError(f"bad user name {user!r}: give the namespace as notes carry it "
                            "(`user:` in their frontmatter), e.g. --user alice")
    return user


def _mine(entry: dict, user: str, client: str) -> bool:
    return entry["user"] == user and client_of(entry) == client


def existing(vault_root, user: str, client: str = DEFAULT_CLIENT) -> dict | None:
    """`user`'s stored entry for `client` (without the token, which is not kept), or None."""
    return next((e for e in load(vault_root) if _mine(e, user, client)), None)


def any_for(vault_root, client: str) -> bool:
    """Whether some user has a token for `client`."""
    return any(client_of(e) == client for e in load(vault_root))


def issue(vault_root, user: str, client: str = DEFAULT_CLIENT) -> dict:
    """A new token for `user`'s `client`, replacing that client's earlier one:
    `{"user", "token", "created", "client"}`."""
    user = _checked_user(user)
    token = PREFIX + secrets.token_urlsafe(32)
    created = datetime.now().replace(microsecond=0).isoformat()
    entries = [e for e in load(vault_root) if not _mine(e, user, client)]
    entry = {"user": user, "sha256": _digest(token), "created": created}
    if client != DEFAULT_CLIENT:
        entry["client"] = client
    entries.append(entry)
    _save(vault_root, entries)
    return {"user": user, "token": token, "created": created, "client": client}


def revoke(vault_root, user: str, client: str = DEFAULT_CLIENT) -> bool:
    """Remove `user`'s token for `client`; False when it had none."""
    entries = load(vault_root)
    kept = [e for e in entries if not _mine(e, user, client)]
    if len(kept) == len(entries):
        return False
    _save(vault_root, kept)
    return True


def acting_user(owner: str, user: str | None) -> str:
    """The user a call made with `owner`'s token acts for: `owner`, whom a `user` naming
    anyone else may not change."""
    if user not in (None, owner):
        raise VaultmemError(f"this connection acts for user {owner!r} only — omit `user`, "
                            "or connect with that user's token")
    return owner


def user_for(vault_root, token: str, client: str = DEFAULT_CLIENT) -> str | None:
    """The user `token` acts for on `client`, or None. Every stored hash is compared, each
    in constant time, so the answer takes as long whichever entry (if any) matches."""
    digest = _digest(token)
    found = None
    for entry in load(vault_root):
        if hmac.compare_digest(entry["sha256"], digest) and client_of(entry) == client:
            found = entry["user"]
    return found
