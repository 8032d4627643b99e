"""Carry out write-policy decisions on disk: create, merge, supersede, entity hubs.

The policy (`policy/decide.py`) decides; this module writes notes atomically inside the caller's
`change.vault_change` (each path is recorded before it is written, so a failure puts the
vault back) and returns the vault-relative paths it touched.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from vaultmem import clock
from vaultmem.errors import ConcurrentEdit, VaultmemError
from vaultmem.index.readings import memory_readings
from vaultmem.memory.memories import update_note, write_memory
from vaultmem.policy.decide import Decision
from vaultmem.policy.pool import Existing, Pool
from vaultmem.store.ids import new_id
from vaultmem.store.layout import UNDATED_TAG
from vaultmem.store.links import LinkResolver, entity_link
from vaultmem.store.note import read_note
from vaultmem.store.titles import safe_title
from vaultmem.store.values import as_list, link, link_target
from vaultmem.store.vault import Vault

# `apply(stated=UNDATED)`: the statement's day cannot be known (a transcript without times).
# Its memory gets no guessed `valid_from` and `layout.UNDATED_TAG` instead, so a reader, the
# context block and the export can say "date unknown" rather than pass it off as news.
UNDATED = "undated"


def _corrected_day(was, fix):
    """The old memory's day, moved when the fix is to the very day an event happens ("不对，
    我是说11月22号" of a wedding on 11月8号): the event now happens on the day it names."""
    day = was.get("valid_from")
    if was.type != "event" or fix.kind not in ("iso", "month_day", "zh_date") or not day:
        return day
    from vaultmem.text.dates import find_date

    try:
        anchor = date.fromisoformat(str(day)[:10])
    except ValueError:
        return day
    moved = find_date(fix.new, anchor)
    return moved.date if moved is not None else day


def load_pool(vault: Vault, user: str, snapshot=None, state=None) -> Pool:
    """The user's active memories, with vectors from the index snapshot where indexed, and
    their superseded ones (so a re-run recognises what it already superseded).

    `state` (a `state.State`): each note's reading is kept in state.db and reused while the
    file's size and mtime are unchanged, so a cold `add` in a vault of thousands of memories
    stats them instead of reading and parsing every one."""
    import numpy as np

    vectors = {}
    if snapshot is not None and len(snapshot):
        cols = snapshot.columns
        # (one comparison per column, not per row: 0.1 s of every cold `add` at 10k notes)
        rows = np.flatnonzero((cols["user"] == user) & (cols["status"] == "active"))
        paths = cols["path"][rows].tolist()
        for row, path in zip(rows.tolist(), paths):   # a note's last chunk stands for it
            vectors[path] = np.asarray(snapshot.vectors[row], dtype=np.float32)
    entries, retired = [], []
    for folder, rel, (props, text) in memory_readings(vault, state):
        status = props.get("status", "active")
        if props.get("user", "default") != user or status not in ("active", "superseded"):
            continue
        entry = Existing(id=props.get("id", ""), rel=rel, text=text, type=folder, user=user,
                         subject=props.get("subject", ""), attribute=props.get("attribute", ""),
                         value=props.get("value", ""),
                         source_messages=[str(s) for s in as_list(props.get("source_messages"))],
                         vector=vectors.get(rel),
                         sources=[str(link_target(s)) for s in as_list(props.get("sources"))],
                         valid_from=str(props.get("valid_from") or "")[:10])
        (entries if status == "active" else retired).append(entry)
    return Pool(entries, dedup_threshold=vault.config.dedup_threshold, retired=retired)


def apply(vault: Vault, decision: Decision, pool: Pool, *, change, user: str, run: str | None = None,
          sources=(), vector=None, now: datetime | None = None, stated: date | str | None = None,
          merges: "Merges | None" = None) -> list[str]:
    """Write what `decision` says, within `change` (a `change.VaultChange`); returns the
    vault-relative paths written.

    `stated` is the day the statement was made (its session turn's date): the memory is
    valid from then (or from the day the statement names), and a memory it supersedes
    until then. Default: today (`add`: said now); `UNDATED`: unknown, see UNDATED_TAG.
    A note changed on disk since the pool was read keeps the user's text: updates only
    merge properties into the note as it is now. With `merges`, a duplicate's sources are
    queued there and written by `merges.flush` (once a note, however often it was restated)."""
    now = now or clock.now()
    cand = decision.candidate
    if decision.action in ("rejected", "unchanged"):
        if decision.target is not None:
            decision.path, decision.id = decision.target.rel, decision.target.id
        return []
    if decision.target is not None and not vault.abs(decision.target.rel).exists():
        # The note went away (deleted or moved by the user) since the pool was read:
        # nothing to update or supersede, so the statement becomes a memory of its own.
        pool.discard(decision.target)
        decision.action, decision.target = "created", None
        decision.reason += "; that note is gone, so this is a new memory"
    if merges is not None and decision.target is not None:
        if decision.action == "updated":
            return merges.add(decision, sources, now)
        merges.flush(vault, change, only=decision.target.rel)  # its sources first, then the rest
    if decision.action == "updated":
        return _merge_into(vault, decision, sources, now, change)
    names = getattr(cand, "entities", []) or []
    written = ensure_entities(vault, names, user=user, now=now, change=change,
                              resolver=_run_resolver(vault, pool) if names else None)
    extra = {}
    for key in ("subject", "attribute", "value"):
        value = getattr(cand, key, None)
        if value:
            extra[key] = str(value)
    undated = stated == UNDATED
    valid_from = getattr(cand, "valid_from", None) or (None if undated else stated or now.date())
    tags = list(getattr(cand, "tags", []) or []) + ([UNDATED_TAG] if undated and not valid_from else [])
    old = decision.target if decision.action == "superseded" else None
    entities, message_ids = getattr(cand, "entities", []) or [], getattr(cand, "source_messages", []) or []
    if old is not None:
        extra["supersedes"] = [link(Path(old.rel).stem)]
        if getattr(cand, "corrects", None) is not None:
            # The fixed memory says what the old one said, so it keeps its links and turns too.
            was = read_note(vault.abs(old.rel))
            entities = _merge([str(e).strip("[]") for e in as_list(was.get("entities"))], entities)
            sources = _merge(as_list(was.get("sources")), [link(s) for s in sources])
            message_ids = _merge(as_list(was.get("source_messages")), message_ids)
            if "valid_from" in was.meta and not getattr(cand, "valid_from", None):
                valid_from = _corrected_day(was, cand.corrects)
        elif decision.still_true and old.valid_from and (not valid_from or old.valid_from < str(valid_from)):
            valid_from = date.fromisoformat(old.valid_from)  # a fuller statement of what held since then
    said = stated if isinstance(stated, date) else None if undated else now.date()
    ended = getattr(cand, "valid_to", None)
    if ended and valid_from and valid_from > ended and not getattr(cand, "valid_from", None):
        valid_from = None  # a past state told later ("we lived in Austin until May"): since before
    if said and valid_from != said:
        extra["said"] = said  # when it was said, told apart from when it became true
    alias = getattr(cand, "alias", "")
    if alias and alias != getattr(cand, "title", None):
        extra["aliases"] = [alias]  # Obsidian's: the note found by its English name too
    note_id = new_id()
    path = write_memory(vault, note_id=note_id, text=cand.content, type=cand.type, user=user,
                        importance=getattr(cand, "importance", None),
                        tags=tags, entities=entity_links(_run_resolver(vault, pool), entities) if entities else [],
                        sources=list(sources), source_messages=message_ids,
                        valid_from=valid_from, valid_to=getattr(cand, "valid_to", None), run=run,
                        title=getattr(cand, "title", None), extra=extra, now=now)
    rel = change.created(vault.rel(path))
    if pool.links is not None:
        pool.links.add(rel)
    written.append(rel)
    entry = Existing(id=note_id, rel=rel, text=cand.content, type=cand.type, user=user,
                     subject=extra.get("subject", ""), attribute=extra.get("attribute", ""),
                     value=extra.get("value", ""),
                     source_messages=[str(m) for m in message_ids], vector=vector,
                     sources=[str(link_target(s)) for s in sources],
                     valid_from=str(valid_from or "")[:10])
    if old is not None:
        try:
            change.record(old.rel)
            # The old value held until the new one was said (the rules: a day a statement
            # names is often not the day of the change), or until the day the model says the
            # new one became true; a fuller statement of the same thing ends nothing.
            until = None if decision.still_true else (
                cand.valid_from if getattr(cand, "origin", "") == "model" and getattr(cand, "valid_from", None)
                else said)
            supersede(vault, old, new_rel=rel, until=until, now=now)
        except ConcurrentEdit as exc:
            # The user keeps editing the old note: it stays as they have it (still active,
            # which doctor reports); the new memory is written and must be indexed anyway.
            decision.reason += f"; {old.rel} was left active: {exc}"
        else:
            pool.discard(old)
            written.append(old.rel)
    pool.add(entry)
    decision.path, decision.id = rel, note_id
    return written


def plan(vault: Vault, decision: Decision, pool: Pool, *, user: str, sources=(), vector=None) -> None:
    """What `apply` does to the pool, without writing: a dry run then decides later
    candidates as the real run would (a move within one transcript still supersedes)."""
    cand = decision.candidate
    if decision.action not in ("created", "superseded"):
        return
    title = getattr(cand, "title", None) or cand.content[:60]
    decision.path = vault.rel(vault.folder_for(cand.type) / f"{safe_title(title)}.md")
    pool.add(Existing(id="", rel=decision.path, text=cand.content, type=cand.type, user=user,
                      subject=str(getattr(cand, "subject", None) or ""),
                      attribute=str(getattr(cand, "attribute", None) or ""),
                      value=str(getattr(cand, "value", None) or ""),
                      source_messages=list(getattr(cand, "source_messages", []) or []), vector=vector,
                      sources=[str(link_target(s)) for s in sources]))
    if decision.action == "superseded":
        pool.discard(decision.target)


def _merge_into(vault: Vault, decision: Decision, sources, now: datetime, change) -> list[str]:
    """A duplicate: merge its sources into the note, bump `updated`, keep the higher importance."""
    cand = decision.candidate
    _write_merge(vault, decision.target, [link(s) for s in sources],
                 list(getattr(cand, "source_messages", []) or []),
                 float(getattr(cand, "importance", 0) or 0), now, change)
    decision.path, decision.id = decision.target.rel, decision.target.id
    return [decision.target.rel]


def _write_merge(vault: Vault, target: Existing, sources: list, message_ids: list, importance: float,
                 now: datetime, change) -> None:
    path = vault.abs(target.rel)
    note = read_note(path)
    merged_sources = _merge(as_list(note.get("sources")), sources)
    merged_ids = _merge(as_list(note.get("source_messages")), message_ids)
    changes = {"updated": now, "sources": merged_sources, "source_messages": merged_ids}
    importance = max(float(note.get("importance") or 0), importance)
    if importance:
        changes["importance"] = round(importance, 2)
    if not merged_sources:
        changes.pop("sources")
    if not merged_ids:
        changes.pop("source_messages")
    change.record(target.rel)
    update_note(vault, path, changes, expected_raw=note.raw, now=now)
    target.source_messages = [str(m) for m in merged_ids]
    target.sources = [str(link_target(s)) for s in merged_sources]


class Merges:
    """Duplicates found within one change, merged into their notes once each at its end.

    A fact restated in hundreds of sessions was merged, read and re-rendered with its
    growing `sources` once per restatement: 77 % of a 50,000-turn extraction's late part.
    The pool's entry learns each restatement at once (later decisions see it)."""

    def __init__(self):
        self._queued: dict[str, list] = {}   # rel -> [entry, sources, message ids, importance, now]

    def add(self, decision: Decision, sources, now: datetime) -> list[str]:
        cand, target = decision.candidate, decision.target
        queued = self._queued.setdefault(target.rel, [target, [], [], 0.0, now])
        queued[1] = _merge(queued[1], [link(s) for s in sources])
        queued[2] = _merge(queued[2], list(getattr(cand, "source_messages", []) or []))
        queued[3] = max(queued[3], float(getattr(cand, "importance", 0) or 0))
        queued[4] = now
        target.sources = _merge(target.sources, [str(link_target(s)) for s in sources])
        target.source_messages = _merge(target.source_messages, [str(m) for m in queued[2]])
        decision.path, decision.id = target.rel, target.id
        return [target.rel]

    def flush(self, vault: Vault, change, only: str | None = None) -> list[str]:
        """Write the queued merges (`only`: that note's), within `change`; a note gone or
        being edited meanwhile is skipped with the reason, as `apply` would have."""
        errors = []
        for rel in [only] if only is not None else list(self._queued):
            queued = self._queued.pop(rel, None)
            if queued is None:
                continue
            target, sources, message_ids, importance, now = queued
            if not vault.abs(rel).exists():
                errors.append(f"{rel}: gone before its restatements were merged into it")
                continue
            try:
                _write_merge(vault, target, sources, message_ids, importance, now, change)
            except VaultmemError as exc:
                errors.append(f"{rel}: {exc}")
        return errors


def supersede(vault: Vault, old: Existing, *, new_rel: str, until: date | None, now: datetime) -> None:
    """Mark `old` superseded by the note at `new_rel` (nothing is deleted), valid `until`
    the day the new value was said (None: not known, so no `valid_to` is guessed)."""
    path = vault.abs(old.rel)
    note = read_note(path)
    changes = {"status": "superseded",
               "superseded_by": _merge(as_list(note.get("superseded_by")), [link(Path(new_rel).stem)])}
    if until is not None:
        changes["valid_to"] = until
    if note.status not in ("active", "superseded"):
        changes.pop("status")  # the user archived it meanwhile: their status stands
    update_note(vault, path, changes, expected_raw=note.raw, now=now)


def ensure_entities(vault: Vault, names, *, user: str, now: datetime, change,
                    resolver: LinkResolver | None = None) -> list[str]:
    """Create a hub note in Memory/Entities/ for each entity that has no note of that name
    or alias anywhere in the vault (that note already is the link's target: see
    `entity_links`), within `change`. `resolver` (the run's) learns of each hub."""
    from vaultmem.store.note import Note, render_note
    from vaultmem.store.values import new_memory_meta

    names = list(dict.fromkeys(n.strip() for n in names if n and n.strip()))
    resolver = resolver or (LinkResolver(vault.root) if names else None)
    written = []
    for name in names:
        title = safe_title(link_target(name))
        if resolver.note_named(title) is not None:
            continue
        path = vault.folder_for("entity") / f"{title}.md"
        meta = new_memory_meta(id=new_id(), type="entity", created=now, user=user, importance=0.5)
        body = f"# {title}\n\nHub note: memories that mention {title} link here (see backlinks).\n"
        rel = vault.rel(path)
        change.write(rel, render_note(Note(meta=meta, body=body, path=path)))
        resolver.add(rel)
        written.append(rel)
    return written


def entity_links(resolver: LinkResolver, names) -> list[str]:
    """A memory's `entities` as links Obsidian opens: `Alice`, only an alias of
    `People/Alice Chen.md`, becomes `[[Alice Chen|Alice]]`; a name is linked as it is."""
    return [entity_link(resolver, str(name).strip()) for name in names if name and str(name).strip()]


def _run_resolver(vault: Vault, pool: Pool) -> LinkResolver:
    """The vault's links, walked once per run (the pool lives as long as the run)."""
    if pool.links is None:
        pool.links = LinkResolver(vault.root)
    return pool.links


def _merge(old, new) -> list:
    out = [v for v in old]
    seen = {str(link_target(v)) for v in out}
    for value in new:
        key = str(link_target(value))
        if key not in seen:
            out.append(value)
            seen.add(key)
    return out
