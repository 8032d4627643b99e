"""A run's session notes: found again by their session id, written or extended within a step's
change, and marked once the LLM decided their memories (`extracted_by: llm`).

A session too long for one note (`limits`) is written as linked parts ("… part 2", SPEC §3);
a memory's `sources` link to the part holding its turn. A later export of the session
rewrites its parts in place (ids and file names kept; new parts get free names) and deletes
parts it no longer needs, in the same change; memories citing a turn that moved to another
part are pointed at its new place in that change too.
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.errors import VaultmemError
from vaultmem.extract.sessions import message_link, part_title, render_session_parts, session_title
from vaultmem.store.files import atomic_write
from vaultmem.store.note import read_note
from vaultmem.store.properties import read_head
from vaultmem.store.session_note import Session, block_ids
from vaultmem.store.values import as_list
from vaultmem.store.vault import Vault, is_conflict_copy

EXTRACTED_BY = "extracted_by"  # on a session's first note: the LLM decided its memories


def find_session_notes(vault: Vault) -> dict[tuple[str, str], list[Path]]:
    """(user, session id) -> paths of the session's notes already in the vault, ordered by
    their `part` (a note without one is part 1), then by file name."""
    found: dict[tuple[str, str], list[tuple[int, str, Path]]] = {}
    folder = vault.folder_for("session")
    if folder.is_dir():
        for path in folder.glob("*.md"):
            if is_conflict_copy(path.name):
                continue
            props = read_head(path)
            if props.get("session"):
                found.setdefault((props.get("user", "default"), props["session"]), []).append(
                    (_part_number(props.get("part")), path.name, path))
    return {key: [path for *_order, path in sorted(parts)] for key, parts in found.items()}


def _part_number(value) -> int:
    try:
        return max(int(str(value).strip()), 1)
    except ValueError:
        return 1


def decided_by_llm(old: list[Path], session: Session) -> bool:
    """The session's notes hold every turn of `session` and say the LLM decided its memories."""
    try:
        if str(read_head(old[0]).get(EXTRACTED_BY, "")) != "llm":
            return False
        known = {str(m) for path in old for m in as_list(read_note(path).get("message_ids"))}
    except (OSError, VaultmemError):
        return False
    return {str(t.id) for t in session.turns} <= known


def mark_decided_by_llm(vault: Vault, rel: str, ch) -> None:
    """`extracted_by: llm` on the session's first note, after its memories: a later run skips it."""
    from vaultmem.memory.memories import update_note

    path = vault.abs(rel)
    note = read_note(path)
    if str(note.get(EXTRACTED_BY, "")) == "llm":
        return
    ch.record(rel)
    update_note(vault, path, {EXTRACTED_BY: "llm", "updated": note.meta["updated"]}, expected_raw=note.raw)


def write_session(vault: Vault, session: Session, old: list[Path], user: str, run: str,
                  ch) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Write (or extend) the session's notes within `ch` (None: a dry run, nothing written).
    Returns where each message's turn is, `{message id: (vault path, block id)}`, and the
    vault paths written or deleted. `old`: the session's notes already in the vault."""
    notes = [read_note(path) for path in old]
    if old:
        known = {str(m) for note in notes for m in as_list(note.get("message_ids"))}
        new_ids = {str(t.id) for t in session.turns}
        if new_ids <= known:
            return _turns_at([(vault.rel(path), _blocks(note)) for path, note in zip(old, notes)]), []
        if not known <= new_ids:
            # Turns missing from this export stay in the old notes; it gets notes of its own.
            old, notes = [], []
    # A later export of the same session (or a new one): render in full, reusing the parts'
    # ids and file names in order; a longer session gets new parts under free names.
    folder = vault.folder_for("session")
    rendered = render_session_parts(session, user=user, run=run, note_ids=[note.id for note in notes])
    rels = [vault.rel(path) for path in old[:len(rendered)]]
    if len(rendered) > 1:
        titles = [Path(rel).stem for rel in rels]
        titles += _free_titles(vault, folder, session, range(len(titles) + 1, len(rendered) + 1),
                               {title.lower() for title in titles})
        if titles != [note.title for note in rendered]:  # parts link to each other by name
            rendered = render_session_parts(session, user=user, run=run,
                                            note_ids=[note.id for note in notes], titles=titles)
        rels += [vault.rel(folder / f"{title}.md") for title in titles[len(rels):]]
    elif not rels:
        rels = [vault.rel(vault.unique_path(folder, rendered[0].title))]
    surplus = [vault.rel(path) for path in old[len(rendered):]]
    if ch is not None:
        for i, (rel, note) in enumerate(zip(rels, rendered)):
            if i < len(old):
                ch.write(rel, note.text)
            elif len(rendered) == 1:
                rels[0] = ch.create(folder, note.title, note.text)
            else:  # exactly the name the other parts link to; never over another writer's note
                atomic_write(vault.abs(rel), note.text, overwrite=False)
                ch.created(rel)
        for rel in surplus:  # its turns are in the parts above now
            ch.delete(rel)
    turns_at = _turns_at([(rel, note.block_ids) for rel, note in zip(rels, rendered)])
    written = rels + surplus
    if ch is not None and old:
        was_at = _turns_at([(vault.rel(path), _blocks(note)) for path, note in zip(old, notes)])
        moved = {turn_link(vault, *was_at[m]): turn_link(vault, *turns_at[m])
                 for m in was_at if m in turns_at and was_at[m] != turns_at[m]}
        written += _repoint_sources(vault, moved, ch) if moved else []
    return turns_at, written


def _free_titles(vault: Vault, folder: Path, session: Session, numbers, taken: set[str]) -> list[str]:
    """Free file names for new parts `numbers` of the session, none in `taken` (the names of
    its other parts) nor another of them."""
    titles = []
    for n in numbers:
        title, k = vault.unique_path(folder, part_title(session, n)).stem, 1
        while title.lower() in taken:  # a long title cut to fit lost its " part n"
            k += 1
            title = vault.unique_path(folder, f"{session_title(session)[:40]} part {n}"
                                      + (f" {k}" if k > 2 else "")).stem
        taken.add(title.lower())
        titles.append(title)
    return titles


def _repoint_sources(vault: Vault, moved: dict[str, str], ch) -> list[str]:
    """Point memories' `sources` citing a moved turn (`moved`: old link -> new link) at its
    new place, within `ch`; returns the vault paths changed. Their `updated` stays."""
    from vaultmem.memory.memories import update_note

    sessions = vault.folder_for("session")
    prefixes = {old.split("#", 1)[0][2:] + "#^" for old in moved}
    changed = []
    for path in vault.iter_notes():
        if path.parent == sessions:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if not any(prefix in text for prefix in prefixes):
            continue
        note = read_note(path)
        sources = as_list(note.get("sources"))
        repointed = [moved.get(str(value).strip(), value) for value in sources]
        if repointed != sources:
            changes = {"sources": repointed}
            if "updated" in note.meta:
                changes["updated"] = note.meta["updated"]
            changed.append(ch.record(vault.rel(path)))
            update_note(vault, path, changes, expected_raw=note.raw)
    return changed


def turn_link(vault: Vault, rel: str, block: str) -> str:
    """`[[Sessions/2026-11-29 chat-3f2a part 2#^m-12]]` for a turn's part and block."""
    return message_link(Path(rel).relative_to(vault.config.memory_root).with_suffix("").as_posix(), block)


def _blocks(note) -> dict[str, str]:
    """Message id -> block id in a session note, from its `message_ids`, as it was rendered."""
    ids = [str(m) for m in as_list(note.get("message_ids"))]
    return dict(zip(ids, block_ids(ids)))


def _turns_at(parts) -> dict[str, tuple[str, str]]:
    """Message id -> (vault path, block id) over a session's parts `[(path, blocks)]`: the
    first part holding the message (a turn cut into pieces keeps its id in each)."""
    out: dict[str, tuple[str, str]] = {}
    for rel, blocks in parts:
        for message_id, block in blocks.items():
            out.setdefault(str(message_id), (rel, block))
    return out
