"""Session notes (SPEC §3): one note per conversation, one linkable block per turn.

A note is named by the session's date and title (`session_title`): "2026-07-14 Fixing the
flaky CI job", or the session id when the source gives no title.

A turn is a `**Speaker** · YYYY-MM-DD HH:MM` line, the turn's text (secrets redacted), and
a block id, so that Obsidian's `[[Sessions/2026-11-29 chat-3f2a#^m-12]]` opens the turn.
The text is kept as written, blank lines and fenced code included: the turn format
(rendering, escaping, reading back, where each turn is) lives in `session_text`.

    ---
    id: 01JDQ7ZK3M8X2V4N6P9R0S1T2U
    type: session
    ...
    ---
    **Alice** · 2026-11-29 10:29
    I'm cutting back on coffee. ^m-12

A session longer than `limits.MAX_SESSION_TURNS` turns or `limits.MAX_SESSION_NOTE_BYTES`
is written as parts (`render_session_parts`): "2026-11-29 chat-3f2a", "2026-11-29 chat-3f2a
part 2", ... Each part is a session note of its own (its own `message_ids`, block ids and
`part: n`), and links to the previous and the next part; a turn too long for one part is cut
into pieces that keep its message id (their block ids are made unique as usual).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from vaultmem import clock
from vaultmem.policy.redact import redact
from vaultmem.store import limits

# Re-exported: callers read the turn format as `sessions.<name>` too.
from vaultmem.store.ids import new_id
from vaultmem.store.session_note import Session, Turn, block_id, block_ids, project_name, render_turn
from vaultmem.store.titles import safe_title

SESSION_TAG = "vaultmem/session"


@dataclass(frozen=True)
class SessionNote:
    title: str                  # "2026-11-29 chat-3f2a": pass through titles.safe_title/Vault.unique_path
    text: str                   # the whole file: frontmatter + one block per turn, redacted
    note_id: str                # the frontmatter id (a ULID)
    block_ids: dict[str, str]   # original message id -> block id in this note
    redactions: list[str]       # one kind per secret redacted, in turn order
    part: int = 1               # 1-based; a session within the limits has one part
    parts: int = 1


def session_title(session: Session) -> str:
    """`<YYYY-MM-DD> <title>`: the session's start date (else today) and its title, made
    a safe file name and kept short enough for a " part n"; the session id when the
    source gives no title (a jsonl transcript, an untitled export).

        2026-07-14 Fixing the flaky CI job       (a ChatGPT or Claude export's title)
        2026-11-29 chat-3f2a                     (a jsonl session id)

    A title holding the date already is not given it twice. Two sessions may share a
    title: the writer makes the file name unique (`Vault.unique_path`), and finds a
    session's notes again by the `session` id in their frontmatter, not by name."""
    start = session.start or clock.now()
    day = f"{start:%Y-%m-%d}"
    title = " ".join((session.title or "").split())
    name = _short(safe_title(title, fallback="")) if title and title != session.id else ""
    if not name:
        return f"{day} {session.id}"
    return name if name.startswith(day) else f"{day} {name}"


MAX_TITLE_CHARS = 60  # of the conversation's title: with the date and " part 12", within vault.MAX_TITLE


def _short(text: str) -> str:
    if len(text) <= MAX_TITLE_CHARS:
        return text
    cut = text[:MAX_TITLE_CHARS]
    return (cut.rsplit(" ", 1)[0] if " " in cut[20:] else cut).rstrip(" .,;-")


def message_link(session_path: str, block: str) -> str:
    """`("Sessions/2026-11-29 chat-3f2a", "m-12")` -> `[[Sessions/2026-11-29 chat-3f2a#^m-12]]`.

    `session_path` is the note's vault path (or shortest unique path) without `.md`."""
    return f"[[{session_path}#^{block}]]"


def redact_session(session: Session) -> tuple[Session, list[str]]:
    """The session with every turn's text redacted, and the kinds redacted (in order).

    Extractors should read the redacted session, so secrets cannot reach memory notes."""
    kinds: list[str] = []

    def clean(text):
        if not text:
            return text
        text, found = redact(text)
        kinds.extend(found)
        return text

    session_id, title = clean(session.id), clean(session.title)  # they name the note's file
    turns = []
    for turn in session.turns:
        text, speaker = clean(turn.text), clean(turn.speaker)
        turns.append(replace(turn, text=text, speaker=speaker)
                     if (text, speaker) != (turn.text, turn.speaker) else turn)
    return replace(session, id=session_id, title=title, turns=turns), kinds


MARKED = "[REDACTED:secret]"


def hide_marked(session: Session, secrets) -> tuple[Session, int]:
    """The session with every occurrence of `secrets` (strings the model marked secret) in
    its turns' texts shown as `[REDACTED:secret]`, and how many were hidden."""
    hidden = 0
    turns = []
    for turn in session.turns:
        text, count = hide_in(turn.text or "", secrets)
        hidden += count
        turns.append(replace(turn, text=text) if count else turn)
    return replace(session, turns=turns), hidden


def hide_in(text: str, secrets) -> tuple[str, int]:
    """`text` with each of `secrets` shown as `[REDACTED:secret]`, the longest first ("4471-KX-9"
    before "4471"), and how many were hidden."""
    hidden = 0
    for secret in sorted(set(secrets), key=len, reverse=True):
        hidden += text.count(secret)
        text = text.replace(secret, MARKED)
    return text, hidden


def render_session(session: Session, *, user: str = "default", run: str | None = None,
                   note_id: str | None = None) -> SessionNote:
    """Render a session as one session note, whatever its length (`render_session_parts`
    keeps within the limits); turn texts are redacted here, whatever the caller did."""
    session, kinds = redact_session(session)
    return _render(session, kinds, user=user, run=run, note_id=note_id)


def part_title(session: Session, part: int) -> str:
    """The default title of a session's `part` (1-based): `2026-11-29 chat-3f2a part 2`."""
    return session_title(session) if part == 1 else f"{session_title(session)} part {part}"


def split_session(session: Session) -> tuple[list[Session], list[str]]:
    """The session redacted and cut into parts that each render within `limits`
    (MAX_SESSION_TURNS, MAX_SESSION_NOTE_BYTES), and the kinds redacted. Redaction comes
    first, so no secret is cut in two and missed."""
    session, kinds = redact_session(session)
    max_turns, max_bytes = limits.MAX_SESSION_TURNS, limits.MAX_SESSION_NOTE_BYTES
    # Room for everything but the turns: frontmatter keys, a heading, two part links.
    budget = max_bytes - 4096 - 4 * len(session_title(session).encode("utf-8")) \
        - len((session.title or "").encode("utf-8"))
    parts, current, size = [], [], 0
    for turn in session.turns:
        for piece in _pieces(turn, budget):
            cost = _turn_bytes(piece)
            if current and (len(current) >= max_turns or size + cost > budget):
                parts.append(current)
                current, size = [], 0
            current.append(piece)
            size += cost
    parts.append(current)
    return [replace(session, turns=turns) for turns in parts], kinds


def render_session_parts(session: Session, *, user: str = "default", run: str | None = None,
                         note_ids: list[str] | None = None, titles: list[str] | None = None
                         ) -> list[SessionNote]:
    """The session as notes within `limits` (one note when it fits), redacted. `note_ids`
    keeps the ids of parts already written; `titles` are the titles the parts will be saved
    under (default `part_title`): each part links to its neighbours by them, so a caller that
    must rename a part (the name is taken) renders with the names it will really use."""
    parts, kinds = split_session(session)
    titles = list(titles or [part_title(session, n) for n in range(1, len(parts) + 1)])
    if len(titles) != len(parts):
        raise ValueError(f"{len(parts)} parts but {len(titles)} titles")
    note_ids = list(note_ids or [])
    notes = []
    for n, part in enumerate(parts, 1):
        note = _render(part, [], user=user, run=run,
                       note_id=note_ids[n - 1] if n <= len(note_ids) else None,
                       part=(n, len(parts)), titles=titles)
        # Redactions are counted once for the session, on its first part.
        notes.append(replace(note, title=titles[n - 1], redactions=kinds if n == 1 else []))
    return notes


def _pieces(turn: Turn, budget: int) -> list[Turn]:
    """The turn, or, when it alone would not fit a part, pieces of its text (by lines,
    a line longer than that by characters) that each do."""
    room = budget - _turn_bytes(replace(turn, text=""))
    if _turn_bytes(turn) <= budget or room <= 0:
        return [turn]
    pieces, current, size = [], [], 0
    for line in _cut_lines(turn.text.split("\n"), room // 2):
        cost = len(line.encode("utf-8")) + 2  # newline, and an escaping backslash
        if current and size + cost > room:
            pieces.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += cost
    pieces.append("\n".join(current))
    return [replace(turn, text=text) for text in pieces]


def _cut_lines(lines, limit: int):
    for line in lines:
        while len(line.encode("utf-8")) > limit:
            cut = limit // 4  # characters: at most 4 bytes each in UTF-8
            yield line[:cut]
            line = line[cut:]
        yield line


def _turn_bytes(turn: Turn) -> int:
    """What a turn adds to a note: its block, the blank line after it, its `message_ids` line."""
    block = render_turn(turn, block_id(turn.id) + "-999")
    return len(block.encode("utf-8")) + 2 + len(str(turn.id).encode("utf-8")) + 12


def _render(session: Session, kinds: list[str], *, user: str, run: str | None,
            note_id: str | None, part: tuple[int, int] = (1, 1), titles=()) -> SessionNote:
    """One session note of already-redacted turns; `part` (n, of) with the parts' `titles`."""
    from ruamel.yaml.comments import CommentedMap

    from vaultmem.store.note import Note, render_note

    n, of = part
    start = session.start or clock.now()
    note_id = note_id or new_id()
    message_ids = [t.id for t in session.turns]
    blocks = block_ids(message_ids)

    meta = CommentedMap()
    meta["id"] = note_id
    meta["type"] = "session"
    meta["created"] = start
    meta["updated"] = start
    meta["status"] = "active"
    meta["user"] = user
    meta["session"] = session.id
    if of > 1:
        meta["part"] = n
    meta["source"] = session.source
    if session.cwd:   # an agent's session: where it ran, and the project that folder is
        meta["cwd"] = session.cwd
        meta["project"] = project_name(session.cwd)
    if run:
        meta["run"] = run
    meta["message_ids"] = [str(m) for m in message_ids]
    meta["tags"] = [SESSION_TAG]

    paragraphs = []
    if session.title and session.title != session.id:
        paragraphs.append("# " + " ".join(session.title.split()) + (f" (part {n} of {of})" if of > 1 else ""))
    if n > 1:
        paragraphs.append(f"Continued from [[{titles[n - 2]}]]")
    paragraphs.extend(render_turn(turn, block) for turn, block in zip(session.turns, blocks))
    if n < of:
        paragraphs.append(f"Continued in [[{titles[n]}]]")
    body = "\n\n".join(paragraphs) + "\n"
    text = render_note(Note(meta=meta, body=body))
    return SessionNote(session_title(session), text, note_id, dict(zip(message_ids, blocks)), kinds,
                       part=n, parts=of)
