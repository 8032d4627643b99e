"""What is not a memory: the screen every proposed memory passes before any decision.

`screen` reads a whole text (empty, a secret, a greeting or filler, tool output, venting, too
short), `screen_request` a raw turn (one-off requests too), and `screen_names` what would name
or tag the note (a secret there keeps the whole memory out). The rules for what is not a
memory (greetings, fillers, one-off requests, venting) are read from the words in
`text/noise.py`; the extractor's sentence classifier (`text/classify.py`) applies them to
single sentences.
"""

from __future__ import annotations

import re

from vaultmem.policy.redact import find_secrets
from vaultmem.text.noise import ONLY_GREETING, STANDING, TOOL_OUTPUT, is_request, is_venting


def screen(text: str) -> str | None:
    """Why `text` should not become a long-term memory, or None when it may."""
    stripped = " ".join(str(text).split())
    if not stripped:
        return "empty text"
    secrets = find_secrets(stripped)
    if secrets or "[REDACTED:" in stripped:
        kinds = sorted({s.kind for s in secrets}) or ["redacted"]
        return f"contains a secret or sensitive identifier ({', '.join(kinds)}); it stays out of memory"
    if ONLY_GREETING.match(stripped):
        return "greeting or filler"
    if TOOL_OUTPUT.search(stripped):
        return "tool output, not a memory"
    if is_venting(stripped):
        return "emotional venting; it stays in the session note"
    if _too_short(stripped):
        return "too short to be a memory"
    return None


def _too_short(text: str) -> bool:
    """Fewer than three words and fewer than four Chinese characters; a statement in both
    scripts counts both, each Chinese character as a word: "用户有 asthma", "Julian 吃素" and
    "用户叫 Wendy" are memories, "叫 Wendy" is not."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    if len(text.split()) >= 3 or cjk >= 4:
        return False
    latin = len(re.findall(r"[A-Za-z0-9]+", text))
    return not (cjk and latin and cjk + latin >= 3)


def screen_request(text: str) -> str | None:
    """`screen` plus the turn-level rule that one-off requests ("can you summarise…") are not
    memories. Used on raw turns, not on statements an extractor already wrote."""
    reason = screen(text)
    if reason:
        return reason
    if is_request(text) and not STANDING.search(text):
        return "one-off request, not a standing instruction"
    return None


def screen_names(candidate) -> str | None:
    """A secret in what would name or tag the note (its title, entity hubs, tags, slot value)
    keeps the whole memory out: a file name or a hub is never named after a secret."""
    fields = [getattr(candidate, "title", None), getattr(candidate, "alias", None), getattr(candidate, "value", None),
              *(getattr(candidate, "entities", None) or []), *(getattr(candidate, "tags", None) or [])]
    text = " \n ".join(str(f) for f in fields if f)
    if text and ("[REDACTED:" in text or find_secrets(text)):
        return "its title, tags or entities hold a secret; it stays out of memory"
    return None
