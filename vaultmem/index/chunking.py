"""Cut a note into index chunks: what a search hit shows and what gets embedded.

A memory note is usually one chunk (its statement). A session note is cut into two
consecutive turns per chunk (1-2, 2-3, ...; a question and its answer read together), three
where they are Chinese, while they fit in ~60 words (a Chinese character counts half a word:
`script.word_count`); a longer turn gets chunks of its own, split at sentences. A chunk's
`source_messages` are exactly the turns it shows, while `search_text` - the part that is
embedded - adds the neighbouring turns, because a turn like "Yes, last Tuesday!" means
nothing without them (a neighbour of a few hundred words, an assistant's answer, lends only
its opening). In a session with an assistant, each sentence of the person's long message is
also a chunk of its own (`asides`): what a question asks about may be said in passing.
`keywords` (title, type, date, entities, and the words people ask a memory's slot with:
`layout.SLOT_WORDS`) go to full-text search only."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

from vaultmem.store.layout import slot_words
from vaultmem.text.script import is_chinese, word_count

MAX_TURN_WORDS = 60
MAX_MEMORY_WORDS = 150
NEIGHBOUR_WORDS = 60
# A neighbour turn longer than this (an assistant's answer of a few hundred words, a pasted
# document) lends only its opening LONG_NEIGHBOUR_WORDS: its first words say what it answers,
# the rest is its own matter and would drown the turn the chunk shows.
LONG_TURN_WORDS = 120
LONG_NEIGHBOUR_WORDS = 20
# Session chunks show up to this many consecutive turns (a question and its answer) when
# they fit in MAX_TURN_WORDS. LoCoMo dev R@10 (search weights of 1b95a7b, 40 neighbour
# words): 1 turn 76.5, 2 turns 80.8, 3 turns 81.2 at 6% more words per hit; with 60
# neighbour words, 2 turns 82.2.
SESSION_WINDOW = 2
# Chinese turns are short (locomo-zh dev: 19 characters, about 10 words' worth, against 23
# words an English turn), so three of them hold about what two English turns do. LoCoMo-zh
# dev R@10 (use-multilingual-v3): 2 turns 72.9, 3 turns 75.4 at 2.8 sources and 67 characters
# a hit, 4 turns 75.3 at 3.7 sources (over SPEC's 3). English stays at 2 (3 turns: 83.0 -> 82.1).
SESSION_WINDOW_CJK = 3

_WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True)
class SessionWindow:
    """Where a session chunk's embedded text (`search_text`) sits among its note's turns,
    so that it can be embedded in context, each turn once (`passages.chunk_vectors`).

    `lines`: every turn of the note as "speaker: text" (one tuple shared by the note's
    chunks); `first`..`last`: the turns the chunk's embedded text spans, the neighbours
    included; `ranges`: `(turn, start, end)` character ranges of those lines that the
    embedded text holds (a piece of a long turn, a neighbour's first words)."""

    lines: tuple
    first: int
    last: int
    ranges: tuple


@dataclass
class Chunk:
    """One index row before embedding (see the row table in docs/ARCHITECTURE.md)."""

    chunk_id: str
    note_id: str
    path: str
    title: str
    type: str
    status: str
    user: str
    tags: str
    entities: str
    created: str
    updated: str
    valid_from: str
    valid_to: str
    importance: float
    content_hash: str
    text: str
    search_text: str
    source_messages: list = field(default_factory=list)
    sources: list = field(default_factory=list)   # wikilinks to the turns behind the chunk
    # Words that should find the chunk by full-text search but would blur its embedding
    # (title, type, entities, session date): measured, "Title (type, date): statement"
    # lowered the cosine of a paraphrased question from 0.42 to 0.21 with MiniLM.
    keywords: str = ""
    # The first day the memory was known to hold, for `--as-of`: an event told before it
    # happens (a wedding planned in October for June) from the day it was told (`said`);
    # '' for the rest, which hold from `valid_from` (else `created`).
    held_from: str = ""
    window: SessionWindow | None = None   # a session chunk's place among its turns (not stored)

    def to_row(self, vector) -> dict:
        row = dict(self.__dict__)
        del row["window"]
        row["vector"] = vector
        return row


_SPACED_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}(?::\d{2})?)$")


def as_text(value) -> str:
    """A frontmatter scalar as an ISO string ('' when absent)."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.replace(microsecond=0, tzinfo=None).isoformat(timespec="seconds")
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    spaced = _SPACED_DATETIME.match(text)
    return f"{spaced.group(1)}T{spaced.group(2)}" if spaced else text


def as_list(value) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [as_text(v) for v in value if as_text(v)]
    return [as_text(value)]


def link_target(value: str) -> str:
    """`"[[Coffee|c]]"` -> `Coffee`; a plain string stays itself."""
    match = _WIKILINK.search(value)
    return match.group(1).strip() if match else value.strip()


@dataclass
class IndexedNote:
    """What chunking needs of a note: its properties and its body."""

    meta: dict
    body: str


def read_for_index(data: bytes, path) -> IndexedNote:
    """Parse a note's bytes for indexing, fast (`properties.read_properties`: every scalar a
    string, as chunking wants them). Anything unusual (no or bad frontmatter, encoding,
    size) goes through `note.parse_note_bytes`, so errors read the same everywhere."""
    from vaultmem.store.limits import MAX_NOTE_BYTES
    from vaultmem.store.note import parse_note_bytes
    from vaultmem.store.properties import read_properties

    if not data.strip() or len(data) > MAX_NOTE_BYTES or b"\x00" in data[:8192]:
        return parse_note_bytes(data, path)
    try:
        text = data.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
    except UnicodeDecodeError:  # the real parser says what is wrong
        return parse_note_bytes(data, path)
    found = read_properties(text, path)
    if found is None:
        return parse_note_bytes(data, path)
    return IndexedNote(*found)


def bar_list(values) -> str:
    """`["a", "b"]` -> `|a|b|`, so that `LIKE '%|a|%'` filters exactly one value."""
    return "|" + "|".join(v.replace("|", "/") for v in values) + "|" if values else ""


def plain(text: str) -> str:
    """Markdown body as one line of prose: links by their label, whitespace collapsed."""
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"^#+\s*", "", text, flags=re.M)
    return " ".join(text.replace("**", "").split())


def split_words(text: str, limit: int) -> list[str]:
    """Split prose into pieces of at most ~`limit` words, at sentence ends when possible."""
    words = text.split()
    if len(words) <= limit:
        return [text] if text else []
    pieces, current = [], []
    for sentence in _SENTENCE_END.split(text):
        sentence_words = sentence.split()
        if current and len(current) + len(sentence_words) > limit:
            pieces.append(" ".join(current))
            current = []
        while len(sentence_words) > limit:
            pieces.append(" ".join(sentence_words[:limit]))
            sentence_words = sentence_words[limit:]
        current.extend(sentence_words)
    if current:
        pieces.append(" ".join(current))
    return pieces


def clip(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[:words]) + " …"


_WORD = re.compile(r"\S+")


def _word_range(text: str, first: int, count: int) -> tuple[int, int]:
    """The character range of `count` whitespace-separated words of `text` from word `first`
    (what `split_words` and `clip` join with single spaces)."""
    words = list(_WORD.finditer(text))
    if not words:
        return 0, 0
    last = min(len(words), first + count) - 1
    return words[min(first, last)].start(), words[last].end()


def chunk_note(note, rel: str, content_hash: str = "", default_user: str = "default") -> list[Chunk]:
    """The chunks of a parsed note (`note.meta`, `note.body`) stored at vault path `rel`."""
    meta = note.meta or {}
    title = rel.rsplit("/", 1)[-1]
    title = title[:-3] if title.endswith(".md") else title
    note_type = as_text(meta.get("type")) or "note"
    base = dict(
        note_id=as_text(meta.get("id")) or rel, path=rel, title=title, type=note_type,
        status=as_text(meta.get("status")) or "active",
        user=as_text(meta.get("user")) or default_user,
        tags=bar_list([t.lstrip("#") for t in as_list(meta.get("tags"))]),
        entities=bar_list([link_target(e) for e in as_list(meta.get("entities"))]),
        created=as_text(meta.get("created")), updated=as_text(meta.get("updated")),
        valid_from=as_text(meta.get("valid_from")), valid_to=as_text(meta.get("valid_to")),
        importance=_importance(meta.get("importance")), content_hash=content_hash)
    if not base["updated"]:
        base["updated"] = base["created"]
    if note_type == "session":
        return _session_chunks(note, meta, base, title)
    return _memory_chunks(note, meta, dict(base, held_from=held_from(note_type, meta, base["valid_from"])), title)


def held_from(note_type: str, meta: dict, valid_from: str) -> str:
    """The day an event told ahead of its day was first known (its `said` day, when before
    `valid_from`); '' otherwise."""
    said = as_text(meta.get("said"))[:10]
    if note_type == "event" and said and valid_from and said < valid_from[:10]:
        return said
    return ""


def _importance(value) -> float:
    try:
        return min(1.0, max(0.0, float(value)))
    except (TypeError, ValueError):
        return 0.5


def _memory_chunks(note, meta, base, title) -> list[Chunk]:
    body = plain(note.body or "")
    if not body:
        body = title
    sources = as_list(meta.get("source_messages"))
    links = as_list(meta.get("sources"))
    when = base["valid_from"] or base["created"][:10]
    entities = [e for e in base["entities"].strip("|").split("|") if e]
    aliases = [str(a) for a in as_list(meta.get("aliases")) if a][:4]
    keywords = " ".join([title, *aliases, base["type"], when, *entities, slot_words(meta.get("attribute"))])
    chunks = []
    for n, piece in enumerate(split_words(body, MAX_MEMORY_WORDS)):
        # A bare statement embeds best; a fragment of a few words needs its title.
        embedded = piece if len(piece.split()) >= 6 or title in piece else f"{title}: {piece}"
        chunks.append(Chunk(chunk_id=f"{base['note_id']}#{n}", text=piece, search_text=embedded,
                            keywords=keywords, source_messages=sources, sources=links, **base))
    if aliases and chunks:  # a Chinese statement's English name, embedded on its own: a question
        # in either language finds the note, and neither embedding is diluted by the other
        first = chunks[0]
        chunks.append(Chunk(chunk_id=f"{base['note_id']}#alias", text=first.text, search_text="; ".join(aliases),
                            keywords=keywords, source_messages=sources, sources=links, **base))
    return chunks


def _session_chunks(note, meta, base, title) -> list[Chunk]:
    # The session writer owns the turn format; block ids map back to message ids through
    # the same deterministic `block_ids` it used on the frontmatter's `message_ids`. A turn
    # is read whole, its paragraphs and code included, so each chunk cites its block id.
    from vaultmem.store.session_note import block_ids, parse_session_turns

    turns = [t._replace(text=plain(t.text)) for t in parse_session_turns(note.body or "")]
    turns = [t for t in turns if t.text]
    ids = as_list(meta.get("message_ids"))
    original = dict(zip(block_ids(ids), ids))
    said_day = (as_text(meta.get("date")) or base["valid_from"])[:10]
    day = said_day or base["created"][:10]
    chunks = []

    def said(turn, text):
        return f"{turn.speaker}: {text}" if turn.speaker else text

    def message_id(turn):
        return original.get(turn.block_id, turn.block_id)

    lines = tuple(said(t, t.text) for t in turns)
    position_of = {id(t): n for n, t in enumerate(turns)}

    def line_range(turn, first_word=0, words=None):
        """(turn, start, end) of words of `turn` within its line (its speaker included)."""
        n = position_of[id(turn)]
        prefix = len(lines[n]) - len(turn.text)
        if words is None:
            return n, 0, len(lines[n])
        start, end = _word_range(turn.text, first_word, words)
        return n, (0 if first_word == 0 else prefix + start), prefix + end

    def day_of(turn) -> str:
        """The day a turn was said: its own time, else the session's `date` ('' when neither)."""
        return turn.time[:10] if len(turn.time) > 5 else said_day

    def lent(neighbour):
        """How many of a neighbour turn's first words a chunk's embedded text borrows."""
        return LONG_NEIGHBOUR_WORDS if word_count(neighbour.text) > LONG_TURN_WORDS else NEIGHBOUR_WORDS

    def add(group, shown, before, after, piece=None):
        first = group[0]
        when = first.time if len(first.time) > 5 else " ".join(x for x in (day, first.time) if x)
        # The day the turns were said: the turn's own time, else the session's `date`. A
        # session without either (a transcript without times) leaves it empty, so nobody
        # shows its import day as the day it was said.
        day_said = day_of(first)
        header = f"{title} ({when})" if when and when not in title else title
        embedded = [said(before, clip(before.text, lent(before)))] if before else []
        embedded += shown
        if after:
            embedded.append(said(after, clip(after.text, lent(after))))
        ranges = [line_range(before, 0, lent(before))] if before else []
        if piece is None:
            ranges += [line_range(t) for t in group]
        elif piece[0] == 0:  # the first piece of a long turn, its speaker with it
            ranges.append(line_range(first, 0, piece[1]))
        else:  # a later piece: its speaker and its words
            n, _, _ = line_range(first)
            ranges += [(n, 0, len(lines[n]) - len(first.text)),
                       line_range(first, piece[0], piece[1])]
        if after:
            ranges.append(line_range(after, 0, lent(after)))
        window = SessionWindow(lines, ranges[0][0], ranges[-1][0], tuple(ranges))
        chunks.append(Chunk(chunk_id=f"{base['note_id']}#{len(chunks)}", text="\n".join(shown),
                            search_text="\n".join(embedded), keywords=header,
                            source_messages=[message_id(t) for t in group],
                            sources=[f"[[{title}#^{t.block_id}]]" for t in group],
                            window=window, **dict(base, valid_from=day_said)))

    for position, turn in enumerate(turns):
        before = turns[position - 1] if position > 0 else None
        group, shown = [turn], [said(turn, turn.text)]
        window = SESSION_WINDOW_CJK if is_chinese(turn.text) else SESSION_WINDOW
        for following in turns[position + 1:position + window]:
            line = said(following, following.text)
            if sum(word_count(x) for x in shown) + word_count(line) > MAX_TURN_WORDS:
                break
            group.append(following)
            shown.append(line)
        end = position + len(group)
        after = turns[end] if end < len(turns) else None
        if len(group) > 1:
            add(group, shown, before, after)
        elif not (chunks and message_id(turn) in chunks[-1].source_messages):
            # (a turn shown whole at the end of the chunk before it needs no chunk of its own)
            offset = 0
            for piece in split_words(turn.text, MAX_TURN_WORDS):
                count = len(piece.split())
                add([turn], [said(turn, piece)], before, after, piece=(offset, count))
                offset += count
    # Asides only where a person writes to an assistant (an agent's session): between two
    # people (LoCoMo) the chunk windows hold a long turn's point (LoCoMo dev R@10 83.0 -> 79.7
    # with asides; LongMemEval-S dev slice 80.6 -> 82.2, R@5 67.2 -> 76.1).
    for turn in turns if any(map(_by_assistant, turns)) else ():
        for sentence in asides(turn):
            chunks.append(Chunk(chunk_id=f"{base['note_id']}#{len(chunks)}", text=said(turn, sentence),
                                search_text=said(turn, sentence), keywords=title,
                                source_messages=[message_id(turn)], sources=[f"[[{title}#^{turn.block_id}]]"],
                                **dict(base, valid_from=day_of(turn))))
    return chunks


# A person's long message to an assistant says several things, and the one a question asks
# about may be an aside ("By the way, I just got back from a follow-up with my dermatologist,
# Dr. Lee"), which the message's chunk, embedded whole with its neighbours, averages away: each
# sentence of a message of at least ASIDE_TURN_WORDS words is also embedded alone, shown as the
# part of the turn that matched, citing the turn. Not the assistant's: its answers are found by
# their chunks. Sentences shorter than ASIDE_WORDS say too little alone; at most ASIDE_MAX a turn.
ASIDE_TURN_WORDS = 30
ASIDE_WORDS = 6
ASIDE_MAX = 12
# A sentence ends at . ! ? (and their CJK forms) but not after a title or a short abbreviation.
_ASIDE_END = re.compile(r"(?<=[。！？])\s*|(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)"
                        r"(?<!\bvs\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bNo\.)(?<!\bJr\.)(?<!\bProf\.)\s+")
ASSISTANT_SPEAKERS = frozenset({"assistant", "ai", "claude", "codex", "model", "bot"})


def is_assistant(speaker: str | None) -> bool:
    """Whether a turn's speaker is the assistant (`ASSISTANT_SPEAKERS`, any case)."""
    return (speaker or "").strip().lower() in ASSISTANT_SPEAKERS


def _by_assistant(turn) -> bool:
    return is_assistant(turn.speaker)


def asides(turn) -> list[str]:
    """The sentences of `turn` embedded on their own (see ASIDE_TURN_WORDS)."""
    if _by_assistant(turn) or word_count(turn.text) < ASIDE_TURN_WORDS:
        return []
    sentences = [x.strip() for x in _ASIDE_END.split(turn.text) if x.strip()]
    if len(sentences) < 2:
        return []
    return [x for x in sentences if word_count(x) >= ASIDE_WORDS][:ASIDE_MAX]
