"""A memory note's reading for the write policy: its properties and statement, read once
and kept in state.db (`State.memory_fields`) while the file is unchanged, so a cold `add`
or `extract` need not read every note again. The indexer hands over what it has just read
(`fresh_reading`); `memory/write.load_pool` reads the rest (`memory_readings`).
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.store.limits import MAX_FRONTMATTER_BYTES, MAX_NOTE_BYTES
from vaultmem.store.note import statement_of
from vaultmem.store.vault import RACY_NS, Vault, is_conflict_copy


def memory_readings(vault: Vault, state=None):
    """`(type, rel, (properties, statement))` of every readable memory note, by folder and
    name; readings come from `state` where the file is as it was when read."""
    import json
    import os
    import stat
    import time

    known = state.memory_fields() if state is not None else {}
    fresh, seen, now = [], set(), time.time_ns()
    for folder in STATEMENT_TYPES:
        base = vault.folder_for(folder)
        try:
            with os.scandir(base) as listing:
                entries = sorted((e for e in listing if e.name.endswith(".md") and not is_conflict_copy(e.name)),
                                 key=lambda e: e.name)
        except OSError:
            continue
        prefix = vault.rel(base)
        for entry in entries:
            rel = f"{prefix}/{entry.name}"
            try:
                st = entry.stat()
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            seen.add(rel)
            cached = known.get(rel)
            if cached is not None and cached[0] == st.st_size and cached[1] == st.st_mtime_ns:
                read = json.loads(cached[2])
            else:
                read = _pool_fields(base / entry.name)   # (a Path only when read: 9k of them cost 0.1 s)
                if read is None:  # an unreadable note is reported by doctor, not here
                    continue
                if state is not None and now - st.st_mtime_ns >= RACY_NS:
                    fresh.append(reading_row(rel, st, read))
                elif cached is not None:
                    seen.discard(rel)   # its old reading is dropped, not kept beside the file
            yield folder, rel, tuple(read)
    if state is not None and (fresh or set(known) - seen):
        state.put_memory_fields(fresh, gone=set(known) - seen)


def reading_row(rel: str, st, read) -> tuple:
    """The state.db row (`State.put_memory_fields`) of a note's reading, `st` its stat."""
    import json

    return rel, st.st_size, st.st_mtime_ns, json.dumps(read, ensure_ascii=False, default=str)


def fresh_reading(rel: str, st, data: bytes, path: Path) -> tuple | None:
    """The state.db row of a memory note the indexer has just read (`data`, stat `st`), so
    that the write policy's next cold `add` finds the note's reading there instead of reading
    the file again; None for a note changed too recently to trust its stat (RACY_NS) or
    one that cannot be read."""
    import time

    if time.time_ns() - st.st_mtime_ns < RACY_NS:
        return None
    read = pool_fields_of(data, path)
    return reading_row(rel, st, read) if read is not None else None


def _pool_fields(path: Path) -> tuple[dict, str] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return pool_fields_of(data, path)


def pool_fields_of(data: bytes, path: Path) -> tuple[dict, str] | None:
    """A memory note's properties (scalars as strings, lists of strings) and its statement,
    read once and scanned line by line where the properties are the simple block vaultmem
    writes (`properties.scan_properties`), else by the fast YAML reader: the round-trip parser
    took ~1 ms a note, seconds of every `add` and `extract` in a vault of thousands."""
    from vaultmem.index.chunking import read_for_index
    from vaultmem.store.note import split_frontmatter
    from vaultmem.store.properties import scan_properties

    try:
        text = data.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None
    if len(data) > MAX_NOTE_BYTES:  # not indexed either; doctor reports it
        return None
    parts = split_frontmatter(text)
    if parts is not None and len(parts[0]) <= MAX_FRONTMATTER_BYTES:
        found = scan_properties(parts[0])
        if found is not None:
            return found, statement_of(parts[1])
    try:
        note = read_for_index(data, path)
    except Exception:
        return None
    return {k: v for k, v in (note.meta or {}).items()}, statement_of(note.body)
