"""A prompt-ready memory block for a question, within a token budget.

    >>> print(build_context(hits, budget=300, count_tokens=embedder.count_tokens))  # doctest: +SKIP
    ## Relevant memories (most relevant first)
    - [2026-11-29 · [[2026-11-29 chat#^m-13]] · score 1.02] Alice: my doctor told me to cut down.
    - [preference · 2026-11-29 · score 0.62] The user is cutting back on coffee. (source: [[2026-11-29 chat#^m-12]])
    - [fact · 2026-09-01 · until 2026-10-12 · score 0.41] The user lives in Chicago. (superseded by [[Lives in Denver]])
    - [event · date unknown · score 0.35] The user starts a new job next Friday.

One list in score order: memories (`[type · date · score]`) and conversation excerpts
(`[date · link · score]`) compete for the budget by score alone, so an excerpt that holds
the answer is never pushed out by a weak memory; a line far below the best one
(`FLOOR_SHARE`) answers another question and is left out. Every line earns its place (issue
50): an entity hub that says nothing but its name gets no line (`hub_only`); an excerpt leaves
out the turns a memory shown cites (the memory line says them, dated and typed), and is left
out when nothing else is left; excerpts of one session that share a turn (search's sliding
windows of two turns) become one line, each turn once, in the order they were said (`Excerpt`).

What must not be missed follows under its own heading: the person's health (an allergy, a
condition, a medication: memories tagged `health` of importance 0.9 or more), the most
relevant first (`pinned`). "Plan dinner for the user" is not near "a severe peanut allergy"
in meaning, but an agent planning dinner needs it: a question about food, drink, medicine or
care (`CARE`) keeps up to a third of the budget for it; any other question shows it only in
what the ranked lines leave. Filling is greedy: an entry that does not
fit the remaining budget is skipped and a shorter one after it may still fit, so the block
never exceeds the budget. With no hit above the search threshold the block says so instead
of padding with weak hits.

What the chosen lines leave of the budget widens their excerpts, best first (`_widen`): a
search hit shows the part of a long turn that matched, 40 words of it, and the answer to "what
was the fifth bottle on the list you gave me?" lies further on in the same turn. Given the
turns (`turns(hit)`, read from the session note), an excerpt is shown again with up to
WIDE_WORDS of each of its turns from a little before the part that matched, or, where that
does not fit, with up to WIDER_WORDS; no line is added or dropped by it.

Each line is dated by when it was said (`said_on`), not when vaultmem wrote it down; a
memory that is no longer current (shown by `--as-of` or `--all`) says until when it held
and what superseded it.
"""

from __future__ import annotations

import re

from vaultmem.index.user_notes import NOTE_TYPE
from vaultmem.retrieve.ranking import turns_of
from vaultmem.store import link_note
from vaultmem.store.layout import UNDATED_TAG

NO_MEMORIES = "No relevant memories."
HEADER = "## Relevant memories (most relevant first)"
PINNED_HEADER = "## Always keep in mind (health)"
UNKNOWN_DATE = "date unknown"
# A question in Chinese gets its block's words in Chinese. The line markers stay as they
# are (`fact`, `until 2026-10-12`, `superseded by`, `score`): agents and SPEC §7 read them.
NOTES_HEADER = "## From the user's own notes (reference, most relevant first)"
LABELS = {"en": {"header": HEADER, "pinned": PINNED_HEADER, "none": NO_MEMORIES, "unknown": UNKNOWN_DATE,
                 "notes": NOTES_HEADER},
          "zh": {"header": "## 相关记忆（最相关的在前）", "pinned": "## 务必记住（健康）",
                 "none": "没有相关的记忆。", "unknown": "日期不详",
                 "notes": "## 用户自己的笔记（参考，最相关的在前）"}}
PINNED_SHARE = 3  # pinned lines take at most 1/PINNED_SHARE of the budget
PINNED_TAG = "health"       # the tag the offline extractor gives them
PINNED_IMPORTANCE = 0.9     # a note a person tagged #health is pinned only when this weighty
PINNED_MAX = 3
CARE = re.compile(
    r"\b(?:eat|eating|ate|food|foods|meal|meals|dinner|lunch|breakfast|brunch|snack|snacks|recipe|recipes|cook|"
    r"cooking|bake|baking|restaurant|restaurants|takeout|menu|dish|dishes|drink|drinks|cocktail|party|"
    r"medicine|medication|drug|drugs|pill|pills|dose|doctor|health|sick|allerg\w*|diet|gift|hamper|"
    r"trip|travel|hike|camping)\b|吃|饭|菜|餐|食|喝|饮|药|医|病|过敏|健康|聚会|旅行|礼物", re.I)
# The block leads with the memory that answers (issue 33): a session excerpt is shown and
# ordered by its search score times EXCERPT_LEAD, so a memory scoring half the excerpt's comes
# first. Blind tune half (batch 1, 428 questions a memory answers): the first line is that
# memory 32 % at 1.0, 36 % at 0.8, 39 % at 0.6, 40 % at 0.5, 42 % at 0.3; 0.5 keeps an excerpt
# that matches far better than any memory above it.
EXCERPT_LEAD = 0.5
# An excerpt whose user turns are mostly `[REDACTED:…]` shows little but the word it matched on.
REDACTED_LEAD = 0.5
EXCERPT_WORDS = 40
# The body of an entity hub vaultmem writes (`memory/write.py`), after its title.
HUB_ONLY = re.compile(r"(?P<name>.+?) Hub note: memories that mention (?P=name) link here \(see backlinks\)\.?")
# A line scoring under this share of the block's best answers some other question: "The user
# was not promoted to Staff Engineer" (0.30) under "What is the user's job title?" led by
# "The user is a Senior Software Engineer" (0.97). Blind tune half (batch 2, model path):
# current probes 62 / 65 / 65 / 66 of 80 at 0 / 0.3 / 0.4 / 0.5, the memory a question asks
# for still in the block 141 / 141 / 140 / 138 of 146.
FLOOR_SHARE = 0.3
# A passage of the user's own notes is cut to this many words (the link leads to the rest).
NOTE_WORDS = 80
# The user's own notes take at most 1/NOTES_SHARE of the budget while memories compete for
# it: a vault of long notes must not crowd out what the agent remembers about the person.
NOTES_SHARE = 2
# Widening an excerpt (`_widen`): each turn shown with up to this many words, from this many
# before the part that matched; else with the smaller window, where the larger does not fit.
WIDE_WORDS = 400
WIDER_WORDS = 150
WIDE_BEFORE = 30


def said_on(hit, unknown: str = UNKNOWN_DATE) -> str:
    """The day `hit` was said, as shown: `valid_from`; for a memory tagged undated, or a
    session excerpt whose turns carry no time, "date unknown"; else the creation day."""
    if hit.valid_from:
        return hit.valid_from[:10]
    if hit.type == "session" or UNDATED_TAG in hit.tags:
        return unknown
    return (hit.created or hit.updated or "")[:10] or unknown


def not_current(hit) -> list[str]:
    """Meta labels of a memory that no longer holds (or holds only until a known day)."""
    labels = [f"until {hit.valid_to[:10]}"] if hit.valid_to else []
    if hit.status != "active" and not (hit.status == "superseded" and hit.superseded_by):
        labels.append(hit.status)
    return labels


def memory_line(hit, unknown: str = UNKNOWN_DATE) -> str:
    meta = " · ".join(x for x in (hit.type, said_on(hit, unknown), *not_current(hit),
                                  f"score {hit.score:.2f}") if x)
    line = f"- [{meta}] {hit.text}"
    if hit.status == "superseded" and hit.superseded_by:
        line += f" (superseded by {', '.join(hit.superseded_by[:2])})"
    if hit.sources:
        line += f" (source: {', '.join(hit.sources[:2])})"
    elif hit.source_messages:
        line += f" (source messages: {', '.join(hit.source_messages[:3])})"
    return line


def note_line(hit) -> str:
    """A passage of the user's own notes: where it is (a link to its heading or block), when
    the note was last edited, its score, then its lines."""
    where = hit.sources[0] if hit.sources else f"[[{hit.title}]]"
    meta = " · ".join(x for x in ("note", where, hit.updated[:10] and f"edited {hit.updated[:10]}",
                                  f"score {hit.score:.2f}") if x)
    lines, left = [], NOTE_WORDS
    for line in hit.text.splitlines():
        if left <= 0:
            lines[-1] += " …"
            break
        parts = line.split(" ")
        lines.append(line if len(parts) <= left else " ".join(parts[:left]) + " …")
        left -= len(parts)
    return f"- [{meta}] " + "\n  ".join(lines)


def block_score(hit) -> float:
    """The score a hit is shown and ordered by in the block: a session excerpt's is its search
    score times EXCERPT_LEAD, and times REDACTED_LEAD when redactions are most of what its
    user turns say. Search ranks turns high for recall (`search.SESSION_FACTOR`); a reader of
    the block wants the memory that answers first, and the turns it came from after it."""
    if hit.type != "session":
        return hit.score
    return hit.score * EXCERPT_LEAD * (REDACTED_LEAD if mostly_redacted(hit.text) else 1.0)


def mostly_redacted(text: str) -> bool:
    """Whether the redactions are at least a third of the words of an excerpt's user turns."""
    said = [line.split(":", 1)[1] for line in text.splitlines()
            if ":" in line and not line.lower().startswith("assistant:")] or [text]
    words = " ".join(said).split()
    return bool(words) and sum("[REDACTED:" in w for w in words) * 3 >= len(words)


def _widen(lines, notes, excerpts, budget, count_tokens, render, turns, labels) -> list[str]:
    """`lines` with their excerpts widened, best first, while the block stays within `budget`:
    each turn an excerpt shows, from its whole text (`turns`), around the part that matched."""
    lines = list(lines)
    for index, excerpt in excerpts:
        whole = excerpt.whole_turns(turns)
        if not whole:
            continue
        for words in (WIDE_WORDS, WIDER_WORDS):
            wider = excerpt.line(labels["unknown"], text="\n".join(
                _window(speaker, said, shown, words) if said is not None else shown
                for speaker, said, shown in whole))
            if len(wider) <= len(lines[index]):
                break
            trial = lines[:index] + [wider] + lines[index + 1:]
            if count_tokens(render(trial, notes)) <= budget:
                lines = trial
                break
    return lines


def _window(speaker: str, said: str, matched: str, words: int) -> str:
    """`speaker: ...` with up to `words` words of the turn `said` from WIDE_BEFORE words before
    where the part that matched (`matched`, the hit's text) begins in it; where several lines of
    `matched` are found far apart in the turn (a window's opening words and an aside from its
    end), up to `words` words from before each, the gaps shown as "…"."""
    turn = said.split()
    starts = sorted({max(0, at - WIDE_BEFORE) for at in _found_all(turn, matched)}) or [0]
    spans: list[list[int]] = []
    for start in starts:
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], start + words)
        else:
            spans.append([start, start + words])
    shown = " … ".join(" ".join(turn[a:b]) for a, b in spans)
    return (f"{speaker}: " + ("… " if spans[0][0] else "") + shown
            + (" …" if spans[-1][1] < len(turn) else ""))


def _found_all(turn: list[str], matched: str) -> list[int]:
    """The words of `turn` where lines of `matched` (each one's first six words after the
    speaker) begin: the first place each is found."""
    found = []
    for line in matched.splitlines():
        probe = line.split(":", 1)[1].split() if ":" in line else line.split()
        probe = [w for w in probe if w != "…"][:6]
        if len(probe) < 3:
            continue
        at = next((i for i in range(len(turn) - len(probe) + 1) if turn[i:i + len(probe)] == probe), None)
        if at is not None:
            found.append(at)
    return found


def _clip(line: str) -> str:
    words = line.split(" ")
    return line if len(words) <= EXCERPT_WORDS else " ".join(words[:EXCERPT_WORDS]) + " …"


def build_context(hits, budget: int, count_tokens, pinned=(), care: bool = False,
                  lang: str = "en", turns=None) -> dict:
    """Render `hits` (search.Hit) into a block of at most `budget` tokens, in score order,
    and `pinned` hits (health) under their own heading after them: in up to a third of the
    budget kept for them when `care` (the question is about food, medicine, …), else in
    what the ranked lines leave.

    `count_tokens(text) -> int` is the embedding model's tokenizer (or an equivalent).
    Hits of the user's own notes (type `note`) go under a heading of their own after the
    memories, in score order, and compete for the same budget by score, up to half of it
    while there are memories to show.
    Returns `{"text", "tokens", "memories", "snippets", "notes", "pinned", "ids"}`; `ids`
    are the note ids shown. `lang` ("en" or "zh", the question's language) picks the headings.
    `turns(hit)` -> [(speaker, text), ...], the whole turns an excerpt cites (None when
    unknown), lets what the budget leaves widen the excerpts shown.
    """
    labels = LABELS.get(lang, LABELS["en"])
    pin_lines, pinned_ids = _pinned(pinned, {h.id for h in hits}, budget // PINNED_SHARE, count_tokens,
                                    labels) if care else ([], [])
    # The turns the health lines shown first cite are said there: no excerpt shows them again.
    said = set().union(*(cited_turns(h) for h in pinned if h.id in pinned_ids))
    block = _ranked(hits, budget - (count_tokens("\n".join(pin_lines)) + 1 if pin_lines else 0),
                    count_tokens, labels, turns, said)
    excerpted = block.pop("excerpted")
    if not care:   # health lines in what is left, but none whose turns an excerpt already shows
        room = budget - (block["tokens"] + 1 if block["text"] and block["text"] != labels["none"] else 0)
        pin_lines, pinned_ids = _pinned([h for h in pinned if not cited_turns(h) & excerpted],
                                        {h.id for h in hits}, room, count_tokens, labels)
    pin_text = "\n".join(pin_lines)
    if pin_lines:  # "No relevant memories." would contradict what follows
        ranked = "" if block["text"] == labels["none"] else block["text"]
        text = "\n".join(x for x in (ranked, pin_text) if x)
    else:
        text = block["text"]
    return {**block, "text": text, "tokens": count_tokens(text) if text else 0,
            "pinned": len(pinned_ids), "ids": list(dict.fromkeys(block["ids"] + pinned_ids))}


def _pinned(pinned, shown: set, budget: int, count_tokens, labels=LABELS["en"]) -> tuple[list[str], list[str]]:
    lines: list[str] = []
    ids: list[str] = []
    for hit in pinned:
        if hit.id in shown or hit.id in ids or hit.importance < PINNED_IMPORTANCE:
            continue
        candidate = (lines or [labels["pinned"]]) + [memory_line(hit, labels["unknown"])]
        if count_tokens("\n".join(candidate)) <= budget:
            lines, ids = candidate, ids + [hit.id]
    return lines, ids


def _reranked(hit) -> int | None:
    """The place the LLM rerank gave `hit` (`retrieve/rerank.py`), None when it gave none."""
    return (hit.parts or {}).get("rerank")


def _places(hits, floor: float) -> dict[int, tuple]:
    """The block's order, by `id(hit)`: the places the LLM rerank gave, when it ran, then by
    block score (stable: ties keep search's order). A hit placed by the model is kept under the
    floor. A memory takes the place the model gave an excerpt of a turn it cites when that is
    ahead of its own, just before the excerpt: the model found the turn most helpful and the
    memory states what it says, as the first stage's EXCERPT_LEAD puts a memory before the
    turns it came from (the excerpt then shows the rest of its turns, or goes). Only a memory
    the block would show anyway (the model placed it, or it clears the `floor`): a weak one of
    the same turn that the model left out would otherwise lead, and take the turn that answers
    out of the excerpt."""
    excerpt_places: dict[tuple[str, str], int] = {}
    for hit in hits:
        place = _reranked(hit)
        if place and hit.type == "session":
            for message in hit.source_messages or ():
                turn = (_session_of(hit), str(message))
                excerpt_places[turn] = min(place, excerpt_places.get(turn, place))
    places = {}
    for hit in hits:
        place = _reranked(hit)
        if hit.type not in ("session", NOTE_TYPE) and (place or block_score(hit) >= floor):
            lifted = [excerpt_places[t] for t in cited_turns(hit) if t in excerpt_places]
            place = min([p for p in (place, *lifted) if p], default=None)
        places[id(hit)] = (0, place, hit.type == "session") if place else (1, -block_score(hit), False)
    return places


def hub_only(hit) -> bool:
    """An entity hub that says nothing but that it is one (the body vaultmem writes, no word of
    the person's in it): a line for it spends the budget on a name."""
    return hit.type == "entity" and bool(HUB_ONLY.fullmatch(" ".join(hit.text.split()).lstrip("# ")))


def cited_turns(hit) -> set[tuple[str, str]]:
    """The turns a memory cites, (session note, message id): its i-th source link with its i-th
    message where they pair up (`ranking.turns_of` crosses every session with every message)."""
    sources, messages = list(hit.sources or ()), [str(m) for m in hit.source_messages or ()]
    if sources and len(sources) == len(messages):
        return {(link_note(s), m) for s, m in zip(sources, messages)}
    return turns_of(vars(hit))


def _session_of(hit) -> str:
    """The session note an excerpt is of, named as `ranking.turns_of` names it."""
    return hit.path.rsplit("/", 1)[-1].removesuffix(".md")


class Excerpt:
    """One excerpt line: what one or more search hits of one session note show, as pieces
    `(turn, line)`, each once. `turn` is (session note, message id), as memories cite turns
    (`ranking.turns_of`), or None where a hit's lines are not one a turn."""

    def __init__(self, hits, pieces):
        self.hits, self.pieces = list(hits), list(pieces)

    @staticmethod
    def pieces_of(hit, turns=None) -> list[tuple]:
        """`hit`'s lines with the turn each is of: one line a turn, or, where a turn runs over
        several lines, the turn (read with `turns`) whose words hold the line."""
        lines = hit.text.splitlines() or [hit.text]
        messages = [str(m) for m in hit.source_messages or ()]
        session = _session_of(hit)
        if len(messages) == len(lines):
            return [((session, m), line) for m, line in zip(messages, lines)]
        try:
            read = turns(hit) if turns is not None else None
        except Exception:   # a session note gone or unreadable: lines of no known turn
            read = None
        keys, at = [None] * len(lines), 0
        if read and len(read) == len(messages):
            said = [f"{t[0]}: {t[1]}" if t else "" for t in read]
            for n, line in enumerate(lines):
                words = line.strip().removeprefix("… ").removesuffix(" …")
                found = next((i for i in range(at, len(said)) if words and words in said[i]), None)
                if found is not None:
                    keys[n], at = (session, messages[found]), found
        return list(zip(keys, lines))

    def covers(self, pieces) -> bool:
        """Whether `pieces` share a turn or a line with this excerpt's."""
        keys = {k for k, _ in self.pieces if k}
        return any(k and k in keys or any(line == said and not (k and known) for known, said in self.pieces)
                   for k, line in pieces)

    def merged(self, hits, pieces) -> "Excerpt | None":
        """This excerpt with `pieces` of `hits` placed beside the turns they share (None when
        they add nothing): sliding windows of one conversation become one run of turns."""
        out = list(self.pieces)
        before, at = [], None
        for key, line in pieces:
            same = next((i for i, (k, said) in enumerate(out) if said == line and k == key), None)
            if same is None:   # the same words, one side knowing their turn and the other not
                same = next((i for i, (k, said) in enumerate(out) if said == line and not (k and key)), None)
            if same is None and key:
                same = next((i for i in range(len(out) - 1, -1, -1) if out[i][0] == key), None)
                if same is not None:
                    out.insert(same + 1, (key, line))
                    same += 1
            if same is not None:
                if before:   # what came before the first shared turn goes before it
                    out[same:same] = before
                    same += len(before)
                    before = []
                at = same
            elif at is None:
                before.append((key, line))
            else:
                at += 1
                out.insert(at, (key, line))
        out = before + out if before else out
        return None if out == self.pieces else Excerpt(self.hits + list(hits), out)

    def score(self) -> float:
        return max(block_score(h) for h in self.hits)

    def text(self) -> str:
        return "\n".join(line for _, line in self.pieces)

    def link(self) -> str:
        """A link to the first turn the line shows (the session note itself when no turn is known)."""
        links = {}
        for hit in self.hits:
            messages = [str(m) for m in hit.source_messages or ()]
            if len(messages) == len(hit.sources or ()):
                links.update({(_session_of(hit), m): link for m, link in zip(messages, hit.sources)})
        key, line = self.pieces[0]
        if key in links:
            return links[key]
        for hit in self.hits:   # a line of no known turn that opens its hit: the hit's first turn
            if hit.sources and hit.text.splitlines()[:1] == [line]:
                return hit.sources[0]
        first = next((links[k] for k, _ in self.pieces if k in links), None)
        return first or f"[[{_session_of(self.hits[0])}]]"

    def line(self, unknown: str = UNKNOWN_DATE, text: str | None = None) -> str:
        """The excerpt's bullet: its day, a link to its first turn, its best score, then one
        line a turn, indented to stay in the bullet, each cut to EXCERPT_WORDS (a long answer
        would spend the budget other lines need; the link leads to the whole turn). `text`, when
        given (`_widen`), is shown in place of the pieces."""
        body = text.splitlines() if text is not None else [_clip(line) for _, line in self.pieces]
        return f"- [{said_on(self.hits[0], unknown)} · {self.link()} · score {self.score():.2f}] " + "\n  ".join(body)

    def whole_turns(self, turns) -> list[tuple] | None:
        """[(speaker, whole text, line shown)] for each turn shown, read with `turns(hit)` (a
        list beside `hit.sources`), each turn once; a line of no known turn, or of a turn it
        cannot read, is (None, None, line as shown). None when no turn could be read."""
        whole: dict = {}
        for hit in self.hits:
            try:
                read = turns(hit)
            except Exception:   # a session note gone or unreadable: the excerpt stays as it is
                read = None
            messages = [str(m) for m in hit.source_messages or ()]
            if read and len(read) == len(messages):
                whole.update({(_session_of(hit), m): t for m, t in zip(messages, read) if t})
        out, done = [], set()
        for key, line in self.pieces:
            if key in whole:
                if key not in done:
                    out.append((*whole[key], "\n".join(said for k, said in self.pieces if k == key)))
                    done.add(key)
            else:
                out.append((None, None, _clip(line)))
        return out if any(said is not None for _, said, _ in out) else None


def _excerpt(hit, cited: set, excerpts: list, turns=None) -> tuple | None:
    """Where `hit`, a session excerpt, goes: (None, Excerpt, []) as a line of its own, (index
    in `excerpts`, merged Excerpt, [indexes of the others it joins]) into the first one it
    overlaps (a window between two shown ones joins them), or None when every turn it shows
    is cited by a memory shown (`cited`) or already in the excerpt it overlaps."""
    pieces = Excerpt.pieces_of(hit, turns)
    if all(k is None for k, _ in pieces):
        said = turns_of(vars(hit))
        if said and said <= cited:
            return None
    else:
        pieces = [(k, line) for k, line in pieces if k not in cited]
        if not pieces:
            return None
    touched = [i for i, shown in enumerate(excerpts) if shown.hits[0].path == hit.path and shown.covers(pieces)]
    if not touched:
        return None, Excerpt([hit], pieces), []
    merged = excerpts[touched[0]].merged([hit], pieces)
    if merged is None:
        return None
    for other in touched[1:]:
        merged = merged.merged(excerpts[other].hits, excerpts[other].pieces) or merged
    return touched[0], merged, touched[1:]


def _ranked(hits, budget: int, count_tokens, labels=LABELS["en"], turns=None, said=frozenset()) -> dict:
    """The ranked lines. Excerpts leave out the turns the memories shown cite: chosen once with
    the turns the memories above the floor cite, again with those of the memories that were
    shown, until the two agree (a memory left out for room no longer hides its turns)."""
    hits = [h for h in hits if not hub_only(h)]
    if not hits:
        text = labels["none"] if count_tokens(labels["none"]) <= budget else ""
        return {"text": text, "tokens": count_tokens(text) if text else 0,
                "memories": 0, "snippets": 0, "notes": 0, "ids": [], "excerpted": set()}
    counted: dict[str, int] = {}   # a pass again counts the blocks the one before counted

    def count(text: str) -> int:
        if text not in counted:
            counted[text] = count_tokens(text)
        return counted[text]

    floor = FLOOR_SHARE * max((block_score(h) for h in hits if h.type != NOTE_TYPE), default=0.0)
    places = _places(hits, floor)
    cited = set().union(said, *(cited_turns(h) for h in hits if h.type not in ("session", NOTE_TYPE)
                                and (block_score(h) >= floor or not places[id(h)][0])))
    for _ in range(4):
        chosen = _fill(hits, budget, count, labels, cited, floor, places, turns, said)
        if chosen["cited"] == cited:
            break
        cited = chosen["cited"]
    _without_cited(chosen, labels)
    lines, notes, render = chosen["lines"], chosen["notes"], chosen["render"]
    if turns is not None:
        lines = _widen(lines, notes, chosen["excerpts"], budget, count, render, turns, labels)
    text = render(lines, notes)
    shown = chosen["shown"]
    if not lines and not notes:
        text = labels["none"] if count(labels["none"]) <= budget else ""
    return {"text": text, "tokens": count(text) if text else 0,
            "memories": shown["memories"], "snippets": shown["snippets"], "notes": shown["notes"],
            "ids": list(dict.fromkeys(chosen["ids"])),
            "excerpted": {k for _, e in chosen["excerpts"] for k, _ in e.pieces if k}}


def _without_cited(chosen: dict, labels) -> None:
    """The last word on repeats: a turn a memory shown cites leaves every excerpt (a pass can
    show a memory the pass before did not: they may not agree), an excerpt left empty goes.
    Lines only get shorter, so the block stays within its budget."""
    cited, lines = chosen["cited"], chosen["lines"]
    kept = []
    for index, excerpt in chosen["excerpts"]:
        pieces = [(k, line) for k, line in excerpt.pieces if not (k and k in cited)]
        if pieces == excerpt.pieces:
            kept.append((index, excerpt))
        elif pieces:
            excerpt = Excerpt(excerpt.hits, pieces)
            lines[index] = excerpt.line(labels["unknown"])
            kept.append((index, excerpt))
        else:
            lines[index] = None
            chosen["shown"]["snippets"] -= 1
    order = [i for i, line in enumerate(lines) if line is not None]
    chosen["lines"] = [lines[i] for i in order]
    chosen["excerpts"] = [(order.index(i), e) for i, e in kept]


def _fill(hits, budget: int, count_tokens, labels, cited: set, floor: float, places: dict, turns=None,
          said: frozenset = frozenset()) -> dict:
    """One greedy pass over `hits` in the block's order (`places`, from `_places`); "cited": the
    turns the memories shown cite."""
    lines: list[str] = []
    notes: list[str] = []
    shown = {"memories": 0, "snippets": 0, "notes": 0}
    excerpts: list[Excerpt] = []
    where: list[int] = []          # the line index of each excerpt
    shown_said: set = set(said)   # the turns the memories shown (and health lines above) cite

    def render(memory_lines, note_lines):
        return "\n".join(([labels["header"], *memory_lines] if memory_lines else [])
                         + ([labels["notes"], *note_lines] if note_lines else []))

    ids: list[str] = []
    has_memories = any(h.type != NOTE_TYPE for h in hits)
    for hit in sorted(hits, key=lambda h: places[id(h)]):
        if hit.type != NOTE_TYPE and block_score(hit) < floor and places[id(hit)][0]:
            continue
        if hit.type == NOTE_TYPE:
            more_notes = notes + [note_line(hit)]
            if has_memories and count_tokens(render([], more_notes)) > budget // NOTES_SHARE or \
                    count_tokens(render(lines, more_notes)) > budget:
                continue
            notes = more_notes
            shown["notes"] += 1
        elif hit.type == "session":
            placed = _excerpt(hit, cited, excerpts, turns)
            if placed is None:
                continue
            index, excerpt, joined = placed
            entry = excerpt.line(labels["unknown"])
            if index is None:
                trial = lines + [entry]
            else:
                gone = {where[j] for j in joined}
                trial = [entry if i == where[index] else line for i, line in enumerate(lines) if i not in gone]
            if count_tokens(render(trial, notes)) > budget:
                continue
            if index is None:
                excerpts.append(excerpt)
                where.append(len(lines))
                shown["snippets"] += 1
            else:
                excerpts[index] = excerpt
                for j in sorted(joined, reverse=True):   # their lines are gone: the rest move up
                    at = where[j]
                    del excerpts[j], where[j]
                    where[:] = [w - (w > at) for w in where]
                shown["snippets"] -= len(joined)
            lines = trial
        else:
            trial = lines + [memory_line(hit, labels["unknown"])]
            if count_tokens(render(trial, notes)) > budget:
                continue
            lines = trial
            shown["memories"] += 1
            shown_said |= cited_turns(hit)
        ids.append(hit.id)
    return {"lines": lines, "notes": notes, "shown": shown, "ids": ids, "cited": shown_said,
            "excerpts": list(zip(where, excerpts)), "render": render}
