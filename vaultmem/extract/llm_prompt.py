"""What the LLM is sent: the system prompt, the conversation as the model sees it, and the
token budget a request and its retry must fit (CONTEXT_TOKENS), counted without the model's
tokenizer (`estimate_tokens`).
"""

from __future__ import annotations

from datetime import datetime

# Sized for a small local server (llama.cpp's common --n_ctx 4096): the system prompt, one
# batch of transcript, a retry's echo of the bad reply and its reasons, and the reply itself
# (MAX_TOKENS, so a runaway reply ends) must fit CONTEXT_TOKENS together.
CONTEXT_TOKENS = 4096
MAX_TOKENS = 1024  # sent as max_tokens with every request
RETRY_TOKENS = 600  # the bad reply echoed back and what was wrong with it, both clipped to fit
OVERHEAD_TOKENS = 64  # the chat template's role markers

SYSTEM_PROMPT = """You extract long-term memories from a conversation, for an AI agent's memory.
Return one JSON object: {"memory_items": [ITEM, ...]} and nothing else.
ITEM = {"content": str, "type": "fact"|"preference"|"event"|"procedure", "importance": number 0-1,
        "source_messages": [message ids], "entities": [str], "valid_from": "YYYY-MM-DD"|null,
        "valid_to": "YYYY-MM-DD"|null, "subject": str|null, "attribute": str|null, "value": str|null,
        "correction": bool}
Rules:
- content: one short self-contained statement (at most 40 words) in the third person, naming the
  speaker ("Caroline adopted a dog.") or "The user" when the speaker is just "user". Write it in
  the language of the message.
- Resolve relative dates ("yesterday", "last week", "next month") against the message time and
  write the absolute date in content and valid_from ("On 2023-05-07, Caroline ...").
- type: fact (stable facts: name, job, home, family, pets, tools, projects), preference (likes,
  dislikes, habits), event (something that happened or is planned, with when), procedure
  (standing instructions: "always ...", "from now on ...").
- importance: 0.9 for explicit requests to remember, 0.8 standing instructions, 0.7 core facts,
  0.5 ordinary events, lower for trivia.
- source_messages: the ids (as given in brackets) of the one to three messages the item is
  based on; never an id that is not in the conversation.
- entities: people, places, projects and tools named.
- subject/attribute/value identify what the item sets, so a later change can replace it:
  subject "user" for the user, else the person's name; attribute one of name, home, origin,
  employer, job, relationship, family:<relation>, pet:<kind>, likes:<thing> (value "yes" or
  "no"), tool:<name>, editor, diet, or a short name of your own; value the value it has now.
  Example: subject "Alice", attribute "home", value "Shanghai".
  correction: true when the message corrects something said earlier.
- Skip greetings, thanks, small talk, questions, one-off requests to the assistant, and venting.
  An empty list is a valid answer."""


def render_turns(turns, session_time: datetime | None) -> str:
    """The conversation as the model sees it: one line per message, id in brackets."""
    lines = []
    if session_time:
        lines.append(f"Session time: {session_time.isoformat(sep=' ', timespec='minutes')}")
    lines.append("Messages:")
    lines.extend(line(t) for t in turns)
    return "\n".join(lines)


def line(turn) -> str:
    """One message as the prompt shows it; a message too long for a batch of its own is cut."""
    when = f" {turn.time.isoformat(sep=' ', timespec='minutes')}" if getattr(turn, "time", None) else ""
    head = f"[{turn.id}]{when} {turn.speaker} ({turn.role}): "
    return head + clip(" ".join(turn.text.split()), MAX_BATCH_TOKENS - HEADER_TOKENS - estimate_tokens(head))


HEADER_TOKENS = 32  # "Session time: ...", "Messages:"


def estimate_tokens(text: str) -> int:
    """A cautious token count for sizing batches without the model's tokenizer: a digit is a
    token (Qwen and Llama 3 split numbers digit by digit), other ASCII about 3 characters a
    token, anything else (CJK) about 1.5. Against Qwen2.5's tokenizer it counts 10–20% high
    on English transcripts.

    >>> estimate_tokens("I live in Porto.")
    6
    """
    digits = sum(c in "0123456789" for c in text)
    wide = sum(ord(c) > 127 for c in text)
    return digits + (2 * wide + 2) // 3 + (len(text) - digits - wide + 2) // 3


# transcript tokens per request: what CONTEXT_TOKENS leaves (1,695 with the prompt above)
MAX_BATCH_TOKENS = (CONTEXT_TOKENS - MAX_TOKENS - RETRY_TOKENS - OVERHEAD_TOKENS
                    - estimate_tokens(SYSTEM_PROMPT))


def clip(text: str, tokens: int) -> str:
    """`text` cut to about `tokens` (by `estimate_tokens`), ending in "…" when cut."""
    if estimate_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits
        mid = (low + high + 1) // 2
        low, high = (mid, high) if estimate_tokens(text[:mid]) < tokens else (low, mid - 1)
    return text[:low] + "…"
