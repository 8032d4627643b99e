"""Memory notes on disk: create, read, list and update them (the vault is the truth)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import ConcurrentEdit, NoteParseError, VaultmemError
from vaultmem.store.files import atomic_write
from vaultmem.store.ids import new_id
from vaultmem.store.note import Note, content_hash, parse_note, read_note, render_note
from vaultmem.store.properties import read_head
from vaultmem.store.values import as_list, new_memory_meta, validate_memory
from vaultmem.store.vault import Vault


def title_from_text(text: str, words: int = 9) -> str:
    """A short human title: the first words of the statement, without a final period."""
    first = " ".join(str(text).split())
    for stop in (". ", "。", "！", "？", "; "):
        if stop in first[10:]:
            first = first[: first.index(stop, 10)]
    parts = first.split(" ")
    title = " ".join(parts[:words]) if len(parts) > 1 else first[:40]
    return title.rstrip(".。!！?？,，;") or "Memory"


def write_memory(vault: Vault, *, text: str, type: str, user: str, importance: float | None = None,
                 tags=(), entities=(), sources=(), source_messages=(), valid_from: date | None = None,
                 valid_to: date | None = None, run: str | None = None, title: str | None = None,
                 extra: dict | None = None, now: datetime | None = None,
                 note_id: str | None = None) -> Path:
    """Create a new memory note (id `note_id`, a new one by default) and return its path
    (atomic write; never overwrites)."""
    created = now or clock.now()
    note_id = note_id or new_id()
    meta = new_memory_meta(id=note_id, type=type, created=created, user=user, importance=importance,
                           tags=tags, entities=entities, sources=sources,
                           source_messages=source_messages, valid_from=valid_from,
                           valid_to=valid_to, run=run, extra=extra)
    folder = vault.folder_for(type)
    body = text.strip() + "\n"
    return vault.write_new(folder, title or title_from_text(text), render_note(Note(meta=meta, body=body)))


def load(vault: Vault, path: Path) -> Note:
    """Read a vaultmem note; NoteParseError if it has no frontmatter or is unreadable."""
    note = read_note(path)
    if not note.meta:
        raise NoteParseError(vault.rel(path), "no frontmatter: not a vaultmem note")
    return note


# Re-reads before giving up on a note that keeps changing under vaultmem (an editor saving).
UPDATE_ATTEMPTS = 3


def update_note(vault: Vault, path: Path, changes: dict, *, expected_raw: str | None = None,
                body: str | None = None, remove=(), now: datetime | None = None) -> Note:
    """Change some properties of a note, keeping everything else as the user wrote it.

    `expected_raw` is the text vaultmem read before deciding on the change: if the file
    differs now (the user edited it meanwhile), the change is re-applied to the fresh
    text (property changes merge cleanly; the user's body wins) rather than overwriting it.
    The file is replaced only if it still holds what was just read; an edit landing in
    between makes vaultmem read and merge again, and ConcurrentEdit is raised (the user's
    text kept) if the note is still changing after UPDATE_ATTEMPTS tries.
    """
    for _attempt in range(UPDATE_ATTEMPTS):
        note = read_note(path)
        if not note.meta:
            raise NoteParseError(vault.rel(path), "no frontmatter: not a vaultmem note; left untouched")
        user_edited = expected_raw is not None and note.raw != expected_raw
        for key, value in changes.items():
            note.meta[key] = value
        for key in remove:
            note.meta.pop(key, None)
        if "updated" not in changes:
            note.meta["updated"] = now or clock.now()
        if body is not None and not user_edited:
            note.body = body
        read = (("\ufeff" if note.bom else "") + note.raw).encode("utf-8")
        try:
            atomic_write(path, render_note(note), expected=read)
            return note
        except ConcurrentEdit:
            continue
    raise ConcurrentEdit(f"{vault.rel(path)} changed while vaultmem was updating it — run the command again")


def summary(vault: Vault, path: Path, note: Note) -> dict:
    """The JSON shape `list` and `show` print for one note."""
    meta = note.meta
    return {
        "id": note.id,
        "path": vault.rel(path),
        "type": note.type,
        "title": path.stem,
        "status": note.status,
        "user": note.user,
        "created": _iso(meta.get("created")),
        "updated": _iso(meta.get("updated")),
        "valid_from": _iso(meta.get("valid_from")),
        "valid_to": _iso(meta.get("valid_to")),
        "importance": meta.get("importance"),
        "tags": [str(t) for t in as_list(meta.get("tags"))],
        "text": note.statement(),
    }


def _iso(value) -> str | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return clock.iso(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def plain_meta(meta) -> dict:
    """Frontmatter as plain JSON-able values (dates as ISO strings)."""
    out = {}
    for key, value in (meta or {}).items():
        if isinstance(value, (list, tuple)):
            out[str(key)] = [_iso(v) if isinstance(v, (date, datetime)) else _plain(v) for v in value]
        elif isinstance(value, (date, datetime)):
            out[str(key)] = _iso(value)
        else:
            out[str(key)] = _plain(value)
    return out


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (date, datetime)):
        return _iso(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def list_notes(vault: Vault, *, type: str | None = None, user=None,
               status: str | None = None, include_sessions: bool = False) -> tuple[list[dict], list[dict]]:
    """Summaries of memory notes matching the filters, and the notes that failed to parse.
    `user` is one namespace or a set of them (None: every namespace)."""
    users = {user} if isinstance(user, str) else (set(user) if user else None)
    notes, errors = [], []
    for path in vault.iter_notes():
        try:
            note = load(vault, path)
        except NoteParseError as exc:
            errors.append({"path": vault.rel(path), "reason": exc.reason})
            continue
        if note.type == "session" and not include_sessions and type != "session":
            continue
        if type and note.type != type:
            continue
        if users and note.user not in users:
            continue
        if status and note.status != status:
            continue
        notes.append(summary(vault, path, note))
    notes.sort(key=lambda n: (n["type"], n["created"] or "", n["title"]))
    return notes, errors


def not_found(ref: str):
    from vaultmem.errors import NoteNotFound

    return NoteNotFound(f"no note matches {ref!r} — give a path, a title or an id "
                        "(`vaultmem list` shows them)")


def owner_of(path: Path) -> str | None:
    """The `user` of a note on disk, None when it cannot be read."""
    try:
        return read_note(path).user
    except VaultmemError:
        return None


def _resolve_owned(vault: Vault, ref: str, users=None) -> Path:
    """`vault.resolve(ref)` limited to the notes of `users` (a name or a collection; None:
    anyone's). Another namespace's note is reported exactly like a missing one, and a title
    that several users' notes share resolves to the caller's own (no other path is named)."""
    from vaultmem.errors import AmbiguousNote

    if not users:
        return vault.resolve(ref)
    users = {users} if isinstance(users, str) else set(users)
    try:
        path = vault.resolve(ref)
    except AmbiguousNote:
        path = None
    if path is not None and owner_of(path) in users:
        return path
    # By title or id among the caller's notes only (their other notes never show up).
    title = ref[:-3] if ref.endswith(".md") else ref
    mine = [p for p in vault.iter_notes()
            if (p.stem.lower() == title.lower() or read_head(p).get("id") == ref) and owner_of(p) in users]
    mine = [p for p in mine if p.stem == title] or mine
    if not mine:
        raise not_found(ref)
    if len(mine) > 1:
        listing = ", ".join(vault.rel(p) for p in mine[:5])
        raise AmbiguousNote(f"{ref!r} matches several notes ({listing}) — give the path")
    return mine[0]


def resolve_note(vault: Vault, ref: str, users=None, *, gone: bool = False) -> str:
    """The one NOTE resolver every front end uses (CLI, `Memory`, daemon, MCP server): a
    path, title or id to a vault path, with the owner check inside. `users` (a name or a
    collection; None: anyone's) are the namespaces the caller may reach; another
    namespace's note is reported exactly like a missing one. `gone`: a note no longer on
    disk (rolled back, deleted) is still accepted by its path, so its history can be read
    and restored; it belongs to the `user` of its last committed version."""
    from vaultmem.errors import NotAMemoryNote, NoteNotFound

    try:
        return vault.rel(_resolve_owned(vault, ref, users))
    except NotAMemoryNote:
        raise
    except NoteNotFound:
        if not gone:
            raise
    candidate = ref if ref.endswith(".md") else f"{ref}.md"
    try:
        rel = vault.rel(vault.abs(candidate))
    except VaultmemError:
        raise not_found(ref) from None
    if "/" in rel and not vault.abs(rel).exists():
        owner = _committed_owner(vault, rel)
        if owner is not _NEVER_COMMITTED and (users is None or owner in _as_set(users)):
            return rel
    raise not_found(ref)


_NEVER_COMMITTED = object()


def _as_set(users) -> set:
    return {users} if isinstance(users, str) else set(users)


def _committed_owner(vault: Vault, rel: str):
    """The `user` of the last committed version of a note gone from disk (None when no
    version parses); `_NEVER_COMMITTED` when git has no version of it."""
    from vaultmem.history import log as history

    versions = history.history(vault.root, rel)
    if not versions:
        return _NEVER_COMMITTED
    for version in versions:
        try:
            return parse_note(history.show_at(vault.root, rel, version["rev"])).user
        except VaultmemError:
            continue  # the deletion itself: look further back
    return None


def check_run_owner(vault: Vault, run: str, users=None) -> None:
    """Refuse a whole-run operation (rollback --run) unless every note the run wrote that
    is still in the vault belongs to `users` (None: anyone's); NoteNotFound otherwise."""
    from vaultmem.errors import NoteNotFound

    if users is None:
        return
    owners = set()
    for path in vault.iter_notes():
        try:
            note = read_note(path)
        except VaultmemError:
            continue
        if str(note.get("run") or "") == run:
            owners.add(note.user)
    if not owners or not owners <= _as_set(users):
        raise NoteNotFound(f"no extraction run {run!r} found for user "
                           f"{', '.join(sorted(_as_set(users)))} — `vaultmem log` lists runs")


def show(vault: Vault, ref: str, user=None) -> dict:
    """One note in full: summary, properties, body and the file's hash. `user` (a name or a
    collection of names) limits it to those namespaces' notes."""
    path = vault.abs(resolve_note(vault, ref, user))
    note = load(vault, path)
    out = summary(vault, path, note)
    out["meta"] = plain_meta(note.meta)
    out["body"] = note.body
    out["hash"] = content_hash(note.raw)
    out["problems"] = validate_memory(note)
    return out
