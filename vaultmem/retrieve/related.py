"""What lies nearest a note (the Obsidian plugin's related pane, `vaultmem related`): first
the memories that name it, then the memories and notes whose meaning is nearest its text.

    >>> related(vault, searcher, "Projects/Garden plan.md", k=8, user="default")["hits"][0]["why"]  # doctest: +SKIP
    'links to this note'

A memory names a note when its statement holds the note's title (a `[[link]]` to it holds
it too), the way a person would write "for the Garden plan, ...". Looking is not recalling:
these searches leave the memories' access times alone (`gc` ages a memory nobody recalls).
"""

from __future__ import annotations

import re

from vaultmem.errors import NoteNotFound, NoteParseError
from vaultmem.store.note import read_note
from vaultmem.store.vault import Vault

MENTIONS = "links to this note"
SIMILAR = "similar"
QUERY_CHARS = 1500  # of the note's text: the model reads ~256 tokens of it anyway
_MARKUP = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]|[#>*_`~]+|\^[A-Za-z0-9-]+\s*$", re.M)


def _plain(text: str) -> str:
    """Markdown as words to search with: links as their text, markup dropped."""
    return " ".join(_MARKUP.sub(lambda m: m.group(2) or m.group(1) or " ", text).split())


def _note(vault: Vault, rel: str, readers: set | None):
    """The note at vault path `rel` that this user may read, or NoteNotFound."""
    parts = rel.replace("\\", "/").split("/")
    path = vault.root / rel
    missing = NoteNotFound(f"no note at {rel!r} — give the vault-relative path of a Markdown note")
    if not rel.endswith(".md") or ".." in parts or rel.startswith("/") or not path.is_file():
        raise missing
    if not vault.is_indexed_path(rel):
        raise missing
    try:
        note = read_note(path)
    except (OSError, UnicodeDecodeError, NoteParseError):
        raise missing from None
    if vault.is_memory_path(rel) and readers is not None and note.user not in readers:
        raise missing  # another user's memory is reported exactly like a missing one
    return note


def related(vault: Vault, searcher, rel: str, k: int, user: str, readers: set | None) -> dict:
    """`{"path", "hits": [HIT + "why"]}`: up to `k` hits, those naming the note first."""
    note = _note(vault, rel, readers)
    title = rel.rsplit("/", 1)[-1].removesuffix(".md")
    statement = note.statement() if vault.is_memory_path(rel) and note.meta else note.body
    found, seen = [], {rel}
    named = title.casefold()
    for hit in searcher.search(title, k=max(20, k), user=user, scope="memories"):
        if hit.path in seen or hit.type == "session" or named not in hit.text.casefold():
            continue
        seen.add(hit.path)
        found.append(dict(hit.to_dict(), why=MENTIONS))
    query = f"{title}\n{_plain(statement)}"[:QUERY_CHARS]
    for hit in searcher.search(query, k=k + len(seen) + 4, user=user, scope="all"):
        if len(found) >= k:
            break
        if hit.path in seen:
            continue
        seen.add(hit.path)
        found.append(dict(hit.to_dict(), why=SIMILAR))
    return {"path": rel, "hits": found[:k]}
