"""What the agent learned since a day, for a person to look over (the Obsidian plugin's
review pane, `vaultmem review`): the active memories written or changed since then,
grouped by the session they came from, each with the turn it was said in.

    >>> review(vault, since=datetime(2026, 12, 1))["sessions"][0]["memories"][0]["turn"]  # doctest: +SKIP
    {'link': 'Memory/Sessions/2026-12-01 chat-3f2a#^m3', 'speaker': 'user', 'text': '...', 'time': ''}

A memory's session is the note its first `sources` link points into; the turn is read from
that session note by its block id, as Obsidian would open it. A memory added by hand (no
session source) is grouped under `session: null`. Hub notes (entities) and session notes
themselves are not memories to review.
"""

from __future__ import annotations

from datetime import date, datetime

from vaultmem.errors import BadRequest, NoteParseError
from vaultmem.memory.memories import load, summary
from vaultmem.store.session_note import parse_session_turns
from vaultmem.store.values import as_list
from vaultmem.store.vault import Vault

NOT_REVIEWED = ("session", "entity")
TURN_CHARS = 600  # a turn longer than this is shown cut, with the link to read it whole


def since_day(value: str | None, default: datetime) -> datetime:
    """`since` as a naive local datetime: "2026-12-01", an ISO time (an offset is turned into
    local time), or `default` when not given."""
    if not value:
        return default
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadRequest(f"bad since {value!r}: give a day (2026-12-01) or an ISO time") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone().replace(tzinfo=None)
    return moment


def _moment(value) -> datetime | None:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None) if value.tzinfo is None else value.astimezone().replace(tzinfo=None)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, str) and value:
        try:
            return _moment(datetime.fromisoformat(value))
        except ValueError:
            return None
    return None


def link_target(link: str) -> tuple[str, str]:
    """`[[Sessions/2026-12-01 t1#^m3|alias]]` -> ("Sessions/2026-12-01 t1", "m3")."""
    inner = link.strip().removeprefix("[[").removesuffix("]]").split("|", 1)[0]
    target, _, block = inner.partition("#")
    return target.strip(), block.removeprefix("^").strip()


class _Sessions:
    """Session notes read once each, by the link target a memory's source names."""

    def __init__(self, vault: Vault):
        self.vault = vault
        self._read: dict[str, tuple | None] = {}

    def find(self, target: str) -> tuple | None:
        """(vault path, note, {block: turn}) of the session note `target` names, or None."""
        if target not in self._read:
            self._read[target] = self._load(target)
        return self._read[target]

    def _load(self, target: str):
        root = self.vault.config.memory_root
        for rel in (f"{root}/{target}.md", f"{target}.md"):
            path = self.vault.root / rel
            if ".." in rel.split("/") or not path.is_file():
                continue
            try:
                note = load(self.vault, path)
            except NoteParseError:
                return None
            turns = {turn.block_id: turn for turn in parse_session_turns(note.body)}
            return self.vault.rel(path), note, turns
        return None


def review(vault: Vault, since: datetime, readers: set | None, paths=None) -> dict:
    """The active memories of `readers` (None: everyone's) created or updated since `since`,
    by session: `{"since", "count", "sessions": [...]}` (protocol `review`). `paths`: the
    vault paths to look at (those the index holds as written since then), else every note."""
    sessions = _Sessions(vault)
    groups: dict[str | None, dict] = {}
    count = 0
    notes = vault.iter_notes() if paths is None else (vault.root / rel for rel in paths)
    for path in notes:
        if not path.is_file():
            continue
        try:
            note = load(vault, path)
        except NoteParseError:
            continue  # `doctor` reports it; a review shows what it can read
        if note.type in NOT_REVIEWED or note.status != "active":
            continue
        if readers is not None and note.user not in readers:
            continue
        written = max(filter(None, (_moment(note.meta.get("created")), _moment(note.meta.get("updated")))),
                      default=None)
        if written is None or written < since:
            continue
        item = dict(summary(vault, path, note), run=note.meta.get("run") or None,
                    sources=[str(s) for s in as_list(note.meta.get("sources"))], turn=None)
        session = None
        for source in item["sources"]:
            target, block = link_target(source)
            found = sessions.find(target) if target else None
            if found is None:
                continue
            rel, session_note, turns = found
            session = rel
            turn = turns.get(block)
            if turn is not None:
                text = turn.text if len(turn.text) <= TURN_CHARS else turn.text[:TURN_CHARS].rstrip() + "…"
                item["turn"] = {"link": f"{rel.removesuffix('.md')}#^{block}", "speaker": turn.speaker,
                                "text": text, "time": turn.time}
            if session not in groups:
                groups[session] = _group(rel, session_note, turns)
            break
        if session is None and None not in groups:
            groups[None] = {"session": None, "title": None, "date": None, "runs": [], "memories": []}
        group = groups[session]
        group["memories"].append(item)
        if item["run"] and item["run"] not in group["runs"]:
            group["runs"].append(item["run"])
        count += 1
    out = list(groups.values())
    for group in out:
        group["memories"].sort(key=lambda m: (m["created"] or "", m["title"]))
        group["runs"].sort()
    out.sort(key=lambda g: max((m["updated"] or m["created"] or "") for m in g["memories"]), reverse=True)
    return {"since": since.isoformat(timespec="seconds"), "count": count, "sessions": out}


def _group(rel: str, note, turns: dict) -> dict:
    times = [t.time for t in turns.values() if t.time]
    created = _moment(note.meta.get("created"))
    day = min(times) if times else (created.isoformat(timespec="seconds") if created else None)
    return {"session": rel, "title": rel.rsplit("/", 1)[-1].removesuffix(".md"), "date": day,
            "runs": [], "memories": []}
