"""The memories dashboard: `<memory_root>/Memories.base`, an Obsidian Bases file.

Bases is a core Obsidian plugin (1.9 and later); a `.base` file is YAML naming filters,
property display names and views (Obsidian Help, "Bases syntax"). vaultmem writes the file
once, when the vault is set up; from then on it belongs to the person: vaultmem never
rewrites it, and the indexer skips it (it is not Markdown).

    >>> 'file.inFolder("Memory")' in dashboard_text("Memory")
    True
"""

from __future__ import annotations

import json
from pathlib import PurePath

from vaultmem.store.files import atomic_write
from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.store.vault import Vault

DASHBOARD_NAME = "Memories.base"
# `vaultmem gc`'s default `archive_below_importance`: the dashboard shows the memories the
# decay policy may archive, the person decides before gc does.
GC_IMPORTANCE = 0.5


def ensure_dashboard(vault: Vault) -> str | None:
    """Write the dashboard into the memory folder unless a file of that name is there
    already; return its vault-relative path, or None when nothing was written. A person's
    edited (or replaced) dashboard is never overwritten, not even by a racing writer."""
    path = vault.memory_dir / DASHBOARD_NAME
    if path.is_symlink() or path.exists():
        return None
    try:
        atomic_write(path, dashboard_text(vault.config.memory_root), overwrite=False)
    except FileExistsError:
        return None
    return vault.rel(path)


def dashboard_text(memory_root: str) -> str:
    """The `.base` YAML for a vault whose memories live under `memory_root`: four table
    views (active memories by type, recently changed, superseded, forgetting candidates)
    over the statement notes (facts, preferences, events, procedures)."""
    folder = PurePath(memory_root).as_posix()
    is_statement = "\n".join(f"        - {_expr(f'type == {_literal(t)}')}" for t in STATEMENT_TYPES)
    return f"""\
# Memories dashboard (Obsidian Bases), written once by vaultmem when it set up this vault.
# It is yours: edit, add or remove views and columns as you like. vaultmem never rewrites
# this file; delete it and `vaultmem init` writes a fresh one.
# Columns are the memory notes' frontmatter (id, type, status, importance, ...).
filters:
  and:
    - {_expr(f'file.inFolder({_literal(folder)})')}
    - {_expr('file.ext == "md"')}
    - or:
{is_statement}
properties:
  file.name:
    displayName: Memory
  note.type:
    displayName: Type
  note.status:
    displayName: Status
  note.importance:
    displayName: Importance
  note.valid_from:
    displayName: Said on
  note.valid_to:
    displayName: Valid until
  note.updated:
    displayName: Updated
  note.superseded_by:
    displayName: Superseded by
  note.entities:
    displayName: About
  note.user:
    displayName: User
views:
  # What vaultmem currently believes, one group per type, most important first.
  - type: table
    name: Active memories
    filters:
      and:
        - 'status == "active"'
    groupBy:
      property: note.type
      direction: ASC
    sort:
      - property: note.importance
        direction: DESC
      - property: note.updated
        direction: DESC
    order:
      - file.name
      - note.importance
      - note.valid_from
      - note.updated
      - note.entities
      - note.tags
      - note.user
  # The latest writes, edits and supersessions, whatever their status.
  - type: table
    name: Recently changed
    limit: 50
    sort:
      - property: note.updated
        direction: DESC
    order:
      - file.name
      - note.type
      - note.status
      - note.updated
      - note.importance
      - note.superseded_by
  # Memories that no longer hold, with what replaced them and until when they held.
  - type: table
    name: Superseded
    filters:
      and:
        - 'status == "superseded"'
    sort:
      - property: note.updated
        direction: DESC
    order:
      - file.name
      - note.type
      - note.valid_from
      - note.valid_to
      - note.superseded_by
      - note.updated
  # Low-importance memories, the longest unchanged first: `vaultmem gc` archives these when
  # nobody recalls them for a while. Raise a memory's importance to keep it.
  - type: table
    name: Forgetting candidates
    filters:
      and:
        - 'status == "active"'
        - 'file.hasProperty("importance")'
        - 'importance < {GC_IMPORTANCE}'
    sort:
      - property: note.updated
        direction: ASC
    order:
      - file.name
      - note.type
      - note.importance
      - note.updated
      - note.valid_from
      - note.entities
"""


def _literal(text: str) -> str:
    """A Bases string literal (double quotes, JavaScript escapes), e.g. `"Memory"`."""
    return json.dumps(text, ensure_ascii=False)


def _expr(expression: str) -> str:
    """A filter expression as a single-quoted YAML scalar: no YAML character in a folder
    name (`#`, `:`, a leading `!`) can change what the line means."""
    return "'" + expression.replace("'", "''") + "'"
