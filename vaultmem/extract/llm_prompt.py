"""What the model is sent: the system prompt, the memories already held that bear on a
session, the session as the model sees it, and the token budget a request, its retry and its
reply must fit (`Budget`, from `[llm] context_tokens`), counted without the model's
tokenizer (`estimate_tokens`).

One request a session: the model reads the whole session (a session longer than the context
is sent in parts) beside the held memories nearest to it, and answers with the session's
memories and, for each, what it does to what is held (add, update, merge, ignore). A hosted
model's context (the default, 32,000 tokens) takes nearly any chat session whole; a small
local server (`context_tokens = 4096`) gets the same prompt in smaller parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

OVERHEAD_TOKENS = 64  # the chat template's role markers
HEADER_TOKENS = 32    # "Session time: ...", "Messages:"
SMALL_CONTEXT = 8192  # at or below this, replies and retries are kept short

SYSTEM_PROMPT = """You keep an AI agent's long-term memory about the people it talks with.
You read one conversation (messages with their ids in brackets and their times) and the
memories already held that may bear on it (H1, H2, ...; all said before this conversation).
Write what should be remembered from this conversation, and for each memory what it does to
the held ones.
Return one JSON object and nothing else: {"memory_items": [ITEM, ...], "secrets": [str, ...]}
ITEM = {"content": str, "title": str, "alias": str|null,
        "type": "fact"|"preference"|"event"|"procedure",
        "importance": number 0-1, "source_messages": [message ids],
        "entities": [{"name": str, "kind": "person"|"place"|"organization"|"pet"|"work"}],
        "valid_from": "YYYY-MM-DD"|null, "valid_to": "YYYY-MM-DD"|null,
        "subject": str|null, "attribute": str|null, "value": str|null,
        "action": "add"|"update"|"merge"|"ignore", "target": "H3"|"N2"|["H3", "H5"]|null}
Items are numbered N1, N2, ... in the order you list them.
What to remember: lasting information about the user and the people, pets, places and things
in their life: who they are, home, work, family, health, possessions, projects and tools,
preferences, opinions and habits, plans and events with their dates, and standing
instructions for the assistant ("always ...", "from now on ..."). What the user asks to have
remembered is written as the fact itself ("The user is allergic to peanuts.", not "The user
asked to remember ..."). Not: greetings, thanks, small talk, questions, one-off requests to the
assistant (fix this, summarise that), venting, jokes and exaggerations, a passing feeling or
complaint, trivia that will not matter next month, or what the assistant said unless the user
took it up. Never write a secret, not even in part: passwords, keys, tokens, door or access codes,
card, account or ID numbers. An empty list is a valid answer.
- secrets: every secret the messages hold, copied exactly as written (a password, passcode or
  PIN, a door, alarm, lock or access code, a key or token, a recovery, backup or verification
  code, a security answer, a card, account, ID or policy number), so that the saved
  conversation hides it too; [] when there is none. [REDACTED:...] is hidden already.
- content: one true statement of one fact, self-contained, in the third person ("The user
  ..." for the user, else the person's name), in the language the user writes in, at most 40
  words, with none of the talk around it ("The user mentioned that ..." -> say it). Keep a
  value in the user's own words where the words are the value (每周两次, "medium heat"), not
  their jokes, exaggerations or asides. Write a name as the user wrote it, untranslated: a
  game, app, product, language, place or person the user names in English stays in English
  in a Chinese statement (用户在玩 Elden Ring), and the other way round. Resolve relative dates ("yesterday", "next Friday", "last month")
  against the message's time, and write a date as people write it in that language
  ("October 9, 2026", 2026年10月9日), not as YYYY-MM-DD. A statement of a change states the
  value now ("The user lives in Portland."), not the change ("... moved from Austin to
  Portland") nor the value it replaces or turned down ("The user's blog stays on GitHub
  Pages.", not "... decided not to move it to Netlify"; no "no longer ...", "instead of ..."):
  the old value lives in the memory it updates. When the old value is not held, write it as its own item first, with valid_to, and
  let the new item update it. When the user corrects something said before, write only the
  corrected statement.
- title: names the fact in at most 60 characters, a complete phrase in the memory's language
  ("The user lives in Portland", "Maya's beagle Biscuit").
- alias: when the content is not in English, the title in English (用户在学粤语 -> "The user is
  learning Cantonese"), so a question asked in English finds it too; else null.
- type: fact (lasting facts: identity, home, work, family, pets, possessions, health, projects,
  tools), preference (likes, dislikes, opinions, habits), event (something that happened or is
  planned, dated), procedure (a standing instruction or a how-to the user wants kept).
- importance: 0.9 for what the user asks to have remembered or health, 0.8 standing
  instructions, 0.7 core facts, 0.5 ordinary events, lower for trivia.
- source_messages: the ids of the one to three messages the item comes from.
- entities: the named people, places, organizations, pets and works (books, films, songs,
  projects, products) the item is about; no common nouns, no dates.
- valid_from: the day the statement became true, when the conversation says or implies it
  (the day of a move, a new job, an event; a relative date resolved), else null (the message's
  day is used). valid_to: the day it stopped being true, when said.
- subject/attribute/value name what the item sets, so a later change can replace it: subject
  "user" for the user, else the person's name; attribute one of name, home, origin, employer,
  job, relationship, family:<relation>, pet:<kind>, likes:<thing> (value "yes" or "no"),
  tool:<name>, editor, diet, or a short name of your own; value the value it has now.
- action and target: "add": new information, or information that can be true together with
  what is held (target null). "update": it replaces a held memory, or an earlier item of your
  list, that is no longer true: the same thing about the same person with a new value (a move,
  a new job or title, a changed opinion or plan, a corrected name or date, a plan that came
  true); target that one, or a list of all it replaces.
  "merge": it says what the target says, with more or corrected detail, and replaces it.
  "ignore": the target already says all of it; nothing is written. A plan, a wish or a change
  that did not happen replaces nothing."""


@dataclass(frozen=True)
class Budget:
    """How a context of `context` tokens is shared: the reply (`max_tokens`, so a runaway
    reply ends), a retry's echo of a bad reply and what was wrong with it, the held memories
    shown, and the messages of one request."""

    context: int
    reply: int
    retry: int
    held: int
    turns: int


def budget(context_tokens: int) -> Budget:
    """The shares of a `context_tokens` window; a small local server (4,096 tokens) gets
    short replies and few held memories, a hosted model room for a whole session.

    >>> budget(4096).turns > 1000 and budget(32000).turns > 15000
    True
    """
    context = max(int(context_tokens or 0), 2048)
    small = context <= SMALL_CONTEXT
    reply = 1024 if small else min(context // 4, 16384)
    retry = 400 if small else min(context // 16, 4000)
    held = context // 16 if small else min(context // 8, 6000)
    turns = context - reply - retry - held - OVERHEAD_TOKENS - HEADER_TOKENS - estimate_tokens(SYSTEM_PROMPT)
    return Budget(context, reply, retry, held, max(turns, 256))


def render_request(turns, session_time: datetime | None, held=(), room: int | None = None) -> str:
    """The user message: the held memories (`held`: (key, text, dated) triples) and the
    conversation, one line per message with its id in brackets (each cut to `room` tokens)."""
    lines = []
    if held:
        lines.append("Held memories:")
        lines.extend(f"[{key}]{f' ({dated})' if dated else ''} {text}" for key, text, dated in held)
        lines.append("")
    if session_time:
        lines.append(f"Session time: {session_time.isoformat(sep=' ', timespec='minutes')}")
    lines.append("Messages:")
    lines.extend(line(t, room) for t in turns)
    return "\n".join(lines)


def render_turns(turns, session_time: datetime | None) -> str:
    """The conversation alone, as `render_request` shows it with no held memories."""
    return render_request(turns, session_time)


def line(turn, budget_turns: int | None = None) -> str:
    """One message as the prompt shows it; with `budget_turns`, a message too long for a
    request of its own is cut to fit one."""
    when = f" {turn.time.isoformat(sep=' ', timespec='minutes')}" if getattr(turn, "time", None) else ""
    head = f"[{turn.id}]{when} {turn.speaker} ({turn.role}): "
    text = " ".join(turn.text.split())
    if budget_turns is not None:
        text = clip(text, budget_turns - estimate_tokens(head))
    return head + text


def estimate_tokens(text: str) -> int:
    """A cautious token count for sizing requests without the model's tokenizer: a digit is a
    token (Qwen and Llama 3 split numbers digit by digit), other ASCII about 3 characters a
    token, anything else (CJK) about 1.5. Against Qwen2.5's tokenizer it counts 10–20% high
    on English transcripts.

    >>> estimate_tokens("I live in Porto.")
    6
    """
    digits = sum(c in "0123456789" for c in text)
    wide = sum(ord(c) > 127 for c in text)
    return digits + (2 * wide + 2) // 3 + (len(text) - digits - wide + 2) // 3


def clip(text: str, tokens: int) -> str:
    """`text` cut to about `tokens` (by `estimate_tokens`), ending in "…" when cut."""
    if estimate_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits
        mid = (low + high + 1) // 2
        low, high = (mid, high) if estimate_tokens(text[:mid]) < tokens else (low, mid - 1)
    return text[:low] + "…"


# The small local server's shares (llama.cpp's common --n_ctx 4096), as the tests check them.
SMALL = budget(4096)
CONTEXT_TOKENS, MAX_TOKENS, RETRY_TOKENS = SMALL.context, SMALL.reply, SMALL.retry
