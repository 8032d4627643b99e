"""An optional second stage: the LLM of `[llm]` reorders the first stage's top hits by how well
each helps answer the question (listwise: one request sees them all).

Off by default (`[search] rerank = ""`): with the local model of `benchmarks/llm_server.md`
(Qwen2.5-Coder-1.5B on one thread) it cost 20 s a query and gained nothing, since that model
returns the order it was given (benchmarks/README.md, issue 35). A person with a stronger
endpoint turns it on with `[search] rerank = "llm"` or `search --rerank llm`.

    >>> parse_ranking('{"ranking": [3, 1, 3, 9]}', count=4)
    [2, 0]

The model sees up to the first 100 hits, as many as `[llm] context_tokens` holds, each with
the day it was said and the session it comes from, so that a "when" question can be ranked
(issue 49: with 20, evidence the first stage ranked 21st to 50th was never shown; with 50, a
question whose answer is spread over many sessions still had a quarter of its evidence below
the cut on LoCoMo dev, and 13 % below 100). The model's
order comes first, then the hits it left out in the first stage's order. A hit's `score`
stays the first stage's and `parts["rerank"]` holds the place the model gave it, so with the
stage on the order, not the score, is the ranking. When the endpoint fails or answers with no
usable ranking, the first stage's order stands and the result's `warning` says why.

For the block an agent reads (`context`), the same request also asks which memories no longer
hold (`ended=True`): the model orders the new value first but used to keep the old one below
it unmarked, as history ("The user loves chicken wings" under "The user is now pescatarian"),
and an agent reading the block cannot tell which holds. Each memory the model names as ended
by a later passage is shown `until` the day that passage was told (`Hit.valid_to`, as the
read-time net of `retrieve/current.py` marks the earlier of two values offline); a true
statement that names an old value ("Jonah's transfer to Denver fell through") has not ended.

    >>> parse_ended('{"ranking": [1], "ended": [[3, 1], [2, 2], [9, 1], [3, 4]]}', count=4)
    [(2, 0), (2, 3)]
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from vaultmem.retrieve.hits import Hits
from vaultmem.store import link_note
from vaultmem.text.script import is_chinese

RERANK_CANDIDATES = 100  # the first stage's hits the model sees, at most (about 9,000 tokens)
PASSAGE_CHARS = 300      # each shown up to this long
REPLY_TOKENS = 600       # room for 100 numbers in the ranking
PROMPT_TOKENS = 200      # the instructions and the question, as counted by `_tokens`
SYSTEM = ("You rank passages from a person's memory by how well they help answer a question. "
          "Each passage is dated by the day it was said and names the conversation it comes from; "
          "a question about when something happened, or about a time, is answered by the passages "
          "from then. "
          'Reply with JSON only: {"ranking": [passage numbers, most helpful first]}. '
          "Include every passage that helps; leave out the ones that do not.")
# Asked with `ended=True` (the block an agent reads): which memories a later passage ends.
ENDED = (" Also name each memory that no longer holds on the day asked because a later passage "
         "changes it (a value replaced, a plan dropped, a habit or taste given up), with that later "
         'passage: {"ranking": [...], "ended": [[memory, later passage], ...]}. A statement that is '
         "still true has not ended, even when it names an old value (\"the move to Denver fell "
         "through\"); leave \"ended\" empty when nothing has.")
ENDED_TOKENS = 200       # room in the reply for the pairs


def passage_label(hit) -> str:
    """`2023-07-03 · session "2023-07-03 conv-26-session_5" · excerpt`: the day said, the
    conversation (a session excerpt's own note, a memory's first source) and what kind of
    passage it is."""
    day = (getattr(hit, "valid_from", "") or getattr(hit, "created", "") or "")[:10]
    kind = getattr(hit, "type", "") or ""
    path = getattr(hit, "path", "") or ""
    session = ""
    if kind == "session":
        session = PurePosixPath(path).stem
    else:
        for link in getattr(hit, "sources", None) or ():
            session = link_note(link)
            if session:
                break
    shown = {"session": "excerpt", "note": "the person's note"}.get(kind, f"memory ({kind})" if kind else "")
    return " · ".join(x for x in (day, f'session "{session}"' if session else "", shown) if x)


def _tokens(text: str) -> int:
    """A conservative count: a CJK character is a token, other text four characters a token."""
    return len(text) if is_chinese(text) else len(text) // 4 + 1


def rerank_messages(question: str, hits, today: str | None = None, ended: bool = False) -> list[dict]:
    """The chat request: the question (and the day it is asked, when known) and the hits'
    texts, numbered from 1, each after its label; with `ended`, also which memories have ended."""
    lines = [_passage_line(n, hit) for n, hit in enumerate(hits, 1)]
    asked = f"Asked on: {today}\n" if today else ""
    user = f"Question: {question}\n{asked}\nPassages:\n" + "\n".join(lines) + "\n\nJSON:"
    return [{"role": "system", "content": SYSTEM + (ENDED if ended else "")}, {"role": "user", "content": user}]


def _passage_line(n: int, hit) -> str:
    """`[n] (label) text`, the text cut at PASSAGE_CHARS."""
    text = " ".join(hit.text.split())
    text = text[:PASSAGE_CHARS] + "…" if len(text) > PASSAGE_CHARS else text
    return f"[{n}] ({passage_label(hit)}) {text}"


def candidates(hits, context_tokens: int = 32000, ended: bool = False) -> int:
    """How many of the first hits one request shows: up to RERANK_CANDIDATES, as many as fit
    a `context_tokens` window beside the instructions and the reply (a 4,096-token local
    server sees about 20 English passages, fewer Chinese ones; never under 2 while there are).
    `ended`: the longer instructions and reply of the block's request."""
    room = max(int(context_tokens or 0), 2048) - REPLY_TOKENS - PROMPT_TOKENS
    if ended:
        room -= ENDED_TOKENS + _tokens(ENDED)
    shown = 0
    for hit in hits[:RERANK_CANDIDATES]:
        room -= _tokens(_passage_line(shown + 1, hit))
        if room < 0 and shown >= 2:
            break
        shown += 1
    return shown


def _reply_data(reply: str):
    """The reply's JSON (a fenced block will do); a ValueError when it is not JSON."""
    try:
        return json.loads(reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"the model's reply is not JSON ({exc.msg})") from None


def _position(value, count: int) -> int | None:
    """The 0-based position a passage number names, None when it names none of 1..count."""
    if isinstance(value, bool):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):   # 1e400 is JSON, and infinite
        return None
    return number - 1 if 1 <= number <= count else None


def parse_ranking(reply: str, count: int) -> list[int]:
    """The 0-based positions the reply ranks, best first: numbers 1..count, each once. A
    ValueError when the reply is not that JSON or ranks none of the passages."""
    data = _reply_data(reply)
    ranking = data.get("ranking") if isinstance(data, dict) else data
    if not isinstance(ranking, list):
        raise ValueError('the model\'s reply has no "ranking" list')
    positions = []
    for value in ranking:
        position = _position(value, count)
        if position is not None and position not in positions:
            positions.append(position)
    if not positions:
        raise ValueError("the model ranked none of the passages")
    return positions


def parse_ended(reply: str, count: int) -> list[tuple[int, int]]:
    """The reply's `"ended"` pairs as 0-based (ended, later) positions: both numbers 1..count and
    not the same passage, in the reply's order (a memory may be named with more than one later
    passage: `mark_ended` takes the first that passes its checks). Anything else in it is passed
    over (a reply with no usable pair ends nothing; its ranking still counts)."""
    data = _reply_data(reply)
    pairs = data.get("ended") if isinstance(data, dict) else None
    found: list[tuple[int, int]] = []
    for pair in pairs if isinstance(pairs, list) else ():
        if not isinstance(pair, list) or len(pair) != 2:
            continue
        ended, later = (_position(value, count) for value in pair)
        if None not in (ended, later) and ended != later and (ended, later) not in found:
            found.append((ended, later))
    return found


def mark_ended(shown, pairs, as_of: str | None = None) -> None:
    """Show each active memory the model named as ended `until` the day its later passage was
    told (`Hit.valid_to`): only a memory (not an excerpt or the person's own note) that has no
    last day yet, ended by a memory or an excerpt (not a note, dated by its edit) told on or
    after it, and, with `as_of`, by then. Told, not true from: "the trip is on April 14" is
    dated by the trip, and it ends the day the person says it is off (`current.told_day`)."""
    from vaultmem.retrieve.current import told_day
    from vaultmem.store.layout import STATEMENT_TYPES

    for ended, later in pairs:
        hit, by = shown[ended], shown[later]
        day, since = told_day(by), told_day(hit)
        if (hit.type in STATEMENT_TYPES and by.type in (*STATEMENT_TYPES, "session") and hit.status == "active"
                and not hit.valid_to and day and day >= since and not (as_of and day > as_of[:10])):
            hit.valid_to = day


def llm_rerank(question: str, hits: Hits, chat, context_tokens: int = 32000,
               today: str | None = None, ended: bool = False, as_of: str | None = None) -> Hits:
    """`hits` reordered by the model; `chat(messages, max_tokens)` returns its reply text (it
    raises `LLMError` when the endpoint fails). The first `candidates(...)` are shown; the
    rest keep their places after them. `ended`: the model also names the memories that no
    longer hold, marked in place (`mark_ended`; `as_of`, the day the search is of)."""
    from vaultmem.errors import LLMError

    count = candidates(hits, context_tokens, ended)
    shown = list(hits[:count])
    if len(shown) < 2:
        return hits
    try:
        reply = chat(rerank_messages(question, shown, today, ended), REPLY_TOKENS + (ENDED_TOKENS if ended else 0))
        order = parse_ranking(reply, len(shown))
    except (LLMError, ValueError) as exc:
        kept = Hits(hits)
        kept.warning = "; ".join(x for x in (hits.warning, f"the LLM rerank failed ({exc}); "
                                                             "hits are in the first stage's order") if x)
        return kept
    if ended:
        mark_ended(shown, parse_ended(reply, len(shown)), as_of)
    for place, position in enumerate(order, 1):
        shown[position].parts = dict(shown[position].parts or {}, rerank=place)
    ranked = set(order)
    result = Hits([shown[p] for p in order] + [h for p, h in enumerate(shown) if p not in ranked]
                  + list(hits[count:]))
    result.warning = hits.warning
    return result
