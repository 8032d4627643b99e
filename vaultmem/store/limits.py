"""Size limits, defined once for every path that reads or writes notes (SPEC §3).

The daemon, `reindex`, `doctor`, the note parser and the session-note writer all use these
numbers, so a note is read, indexed or refused the same way whichever path meets it. They
are not settings: a vault's notes must mean the same thing to every vaultmem that opens it.

    >>> note_too_large(3 * 1024 * 1024)
    'file is 3.0 MB, over the 2 MB limit for a note — split it into smaller notes'
    >>> note_too_large(1024) is None
    True
"""

from __future__ import annotations

import math

# A note larger than this is refused on every path (reported, not indexed; its old rows
# leave the index so stale text never stays searchable). 2 MB of prose is ~2,500 chunks,
# minutes of a laptop CPU's embedding while daemon queries wait (0.5 MB took 112 s on a
# busy 2-core machine); no hand-written note is that long.
MAX_NOTE_BYTES = 2 * 1024 * 1024

# Hostile frontmatter must be refused fast: ruamel spends seconds failing on a few hundred
# nested brackets, ~13 s per MB of small keys, and an alias "billion laughs" expands to
# hundreds of millions of values when chunked or rendered. Real properties stay far below.
MAX_FRONTMATTER_BYTES = 1024 * 1024
MAX_FRONTMATTER_DEPTH = 64
MAX_FRONTMATTER_VALUES = 100_000

# A session note vaultmem writes holds at most this many turns and bytes; a longer session
# is split into parts ("… part 2") that link to each other. The turn cap keeps the
# `message_ids` property (one line per turn; a Claude export's ids are 36-character UUIDs)
# under a twentieth of MAX_FRONTMATTER_BYTES; the byte cap, a quarter of MAX_NOTE_BYTES,
# leaves the user room to add to a part and keeps re-embedding one part short.
MAX_SESSION_TURNS = 1000
MAX_SESSION_NOTE_BYTES = MAX_NOTE_BYTES // 4


def note_too_large(size: int) -> str | None:
    """Why a note of `size` bytes is refused (None when it is within MAX_NOTE_BYTES).
    Every path reports an over-limit note with this one sentence."""
    if size <= MAX_NOTE_BYTES:
        return None
    megabytes = math.ceil(size * 10 / 1024 / 1024) / 10  # 5 MB and a byte is "5.1 MB", not "5.0"
    return (f"file is {megabytes:.1f} MB, over the {MAX_NOTE_BYTES // 1024 // 1024} MB "
            "limit for a note — split it into smaller notes")
