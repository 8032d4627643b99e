"""Names of the vault's layout (SPEC §2, §3), written once: the note types, their folders
and vaultmem's state folder. Standard library only, so that the daemon client can import
it without paying for the rest of vaultmem.

    >>> TYPE_FOLDERS["preference"]
    'Preferences'
"""

from __future__ import annotations

# Statements a memory note holds; extractors write them, and they decay when never recalled.
STATEMENT_TYPES = ("fact", "preference", "event", "procedure")
# Plus entity hubs (a person or project that memories link to).
MEMORY_TYPES = STATEMENT_TYPES + ("entity",)
# Plus session notes (a transcript, which memories cite).
NOTE_TYPES = MEMORY_TYPES + ("session",)

# Each note type's folder under the memory root (`Memory/` by default).
TYPE_FOLDERS = {
    "fact": "Facts",
    "preference": "Preferences",
    "event": "Events",
    "procedure": "Procedures",
    "entity": "Entities",
    "session": "Sessions",
}

# vaultmem's own state (config, index, state.db, daemon socket and logs) under the vault root.
STATE_DIR = ".vaultmem"
