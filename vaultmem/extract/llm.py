"""The LLM extractor: an OpenAI-compatible chat-completions endpoint turns turns into `Candidate`s.

Plain urllib, no client library: any server that speaks `/chat/completions` works (OpenAI,
llama.cpp, Ollama, vLLM). The model's output is validated strictly; malformed output gets
one retry that tells the model what was wrong, then `LLMError`. `extract_with_fallback`
catches that and uses the offline extractor instead, with a warning.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import date, datetime

from vaultmem.errors import LLMError
from vaultmem.extract.candidate import Candidate
from vaultmem.layout import STATEMENT_TYPES

MAX_BATCH_CHARS = 12000  # transcript characters per request, so long sessions fit any context
MAX_BATCH_TURNS = 80

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
- subject/attribute/value identify what the item sets, so contradictions can be found:
  subject "Alice", attribute "home", value "Shanghai"; attribute "likes:coffee", value "yes"/"no".
  correction: true when the message corrects something said earlier.
- Skip greetings, thanks, small talk, questions, one-off requests to the assistant, and venting.
  An empty list is a valid answer."""


@dataclass(frozen=True)
class LLMSettings:
    """Where the endpoint is: `[llm]` of config.toml."""

    base_url: str
    model: str
    api_key_env: str = ""
    timeout: float = 60.0

    @classmethod
    def coerce(cls, settings) -> "LLMSettings":
        """From an `LLMSettings`, a dict (`Memory.llm_settings()`), or a `Config` (`llm_*` fields)."""
        if isinstance(settings, cls):
            return settings

        def get(key, default=None):
            if isinstance(settings, dict):
                return settings.get(key, default)
            return getattr(settings, key, getattr(settings, f"llm_{key}", default))

        base_url, model = get("base_url"), get("model")
        if not base_url or not model:
            raise LLMError("LLM settings need base_url and model — set them under [llm] in .vaultmem/config.toml")
        return cls(str(base_url), str(model), str(get("api_key_env", "") or ""), float(get("timeout", 60.0)))


def extract_llm(turns, session_time: datetime | None, settings) -> list[Candidate]:
    """Candidates for `turns` from the LLM; raises `LLMError` on HTTP/connection failure or
    when the model's output does not validate twice in a row."""
    settings = LLMSettings.coerce(settings)
    turns = [t for t in turns if (t.role or "user").lower() in ("user", "assistant") and t.text.strip()]
    out: list[Candidate] = []
    for batch in _batches(turns):
        out.extend(_extract_batch(batch, session_time, settings))
    return out


def extract_with_fallback(turns, session_time: datetime | None, settings, user_names=None):
    """`(candidates, warnings)`: the LLM's candidates, or the offline extractor's when the
    LLM fails (the warning says why)."""
    turns = list(turns)
    try:
        return extract_llm(turns, session_time, settings), []
    except LLMError as exc:
        from vaultmem.extract.offline import extract_offline

        warning = f"LLM extraction failed ({exc}); used the offline extractor instead"
        return extract_offline(turns, session_time, user_names), [warning]


def parse_memory_items(text: str, known_ids) -> list[dict]:
    """The validated items of a model reply; `ValueError` says what is wrong with it."""
    try:
        data = json.loads(_strip_fence(text))
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the reply is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("memory_items"), list):
        raise ValueError('the reply must be a JSON object with a "memory_items" list')
    known = set(known_ids)
    return [_validate_item(item, i, known) for i, item in enumerate(data["memory_items"])]


def _validate_item(item, i: int, known: set) -> dict:
    where = f"memory_items[{i}]"
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError(f"{where}.content must be a non-empty string")
    if item.get("type") not in STATEMENT_TYPES:
        raise ValueError(f"{where}.type must be one of {', '.join(STATEMENT_TYPES)}, not {item.get('type')!r}")
    importance = item.get("importance")
    if isinstance(importance, bool) or not isinstance(importance, (int, float)) or not 0 <= importance <= 1:
        raise ValueError(f"{where}.importance must be a number from 0 to 1, not {importance!r}")
    sources = item.get("source_messages")
    if not isinstance(sources, list) or not sources or not all(isinstance(s, str) for s in sources):
        raise ValueError(f"{where}.source_messages must be a non-empty list of message ids")
    unknown = [s for s in sources if s not in known]
    if unknown:
        raise ValueError(f"{where}.source_messages: {unknown[0]!r} is not a message id of this conversation")
    clean = {"content": " ".join(content.split()), "type": item["type"], "importance": float(importance),
             "source_messages": list(dict.fromkeys(sources))}
    for key in ("entities", "tags"):
        value = item.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{where}.{key} must be a list of strings")
        clean[key] = [v.strip() for v in value if v.strip()]
    for key in ("valid_from", "valid_to"):
        value = item.get(key)
        if value in (None, ""):
            clean[key] = None
            continue
        try:
            clean[key] = date.fromisoformat(str(value)[:10])
        except ValueError:
            raise ValueError(f"{where}.{key} must be a YYYY-MM-DD date or null, not {value!r}") from None
    for key in ("subject", "attribute", "value"):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{where}.{key} must be a string or null")
        clean[key] = value or None
    correction = item.get("correction", False)
    if not isinstance(correction, bool):
        raise ValueError(f"{where}.correction must be true or false")
    clean["correction"] = correction
    return clean


def _extract_batch(turns, session_time, settings: LLMSettings) -> list[Candidate]:
    ids = [t.id for t in turns]
    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": render_turns(turns, session_time)}]
    reply = _chat(settings, messages)
    try:
        items = parse_memory_items(reply, ids)
    except ValueError as first:
        messages += [{"role": "assistant", "content": reply},
                     {"role": "user", "content": f"That reply was invalid: {first}. Answer again with "
                                                 f"only the corrected JSON object."}]
        reply = _chat(settings, messages)
        try:
            items = parse_memory_items(reply, ids)
        except ValueError as second:
            raise LLMError(f"the model's output did not validate twice: {second}") from None
    speakers = {t.id: t.speaker for t in turns}
    return [Candidate(content=item["content"], type=item["type"], importance=item["importance"],
                      source_messages=item["source_messages"], entities=item["entities"],
                      subject=item["subject"], attribute=item["attribute"], value=item["value"],
                      valid_from=item["valid_from"], valid_to=item["valid_to"], tags=item["tags"],
                      correction=item["correction"], speaker=speakers[item["source_messages"][0]])
            for item in items]


def render_turns(turns, session_time: datetime | None) -> str:
    """The conversation as the model sees it: one line per message, id in brackets."""
    lines = []
    if session_time:
        lines.append(f"Session time: {session_time.isoformat(sep=' ', timespec='minutes')}")
    lines.append("Messages:")
    for t in turns:
        when = f" {t.time.isoformat(sep=' ', timespec='minutes')}" if getattr(t, "time", None) else ""
        text = " ".join(t.text.split())
        lines.append(f"[{t.id}]{when} {t.speaker} ({t.role}): {text}")
    return "\n".join(lines)


def _batches(turns):
    batch, size = [], 0
    for turn in turns:
        length = len(turn.text) + 40
        if batch and (size + length > MAX_BATCH_CHARS or len(batch) >= MAX_BATCH_TURNS):
            yield batch
            batch, size = [], 0
        batch.append(turn)
        size += length
    if batch:
        yield batch


def _chat(settings: LLMSettings, messages: list[dict]) -> str:
    """One chat-completions call; the reply's text."""
    url = settings.base_url.rstrip("/") + "/chat/completions"
    body = {"model": settings.model, "messages": messages, "temperature": 0,
            "response_format": {"type": "json_object"}}
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    key = os.environ.get(settings.api_key_env, "") if settings.api_key_env else ""
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=settings.timeout) as response:
            payload = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:200].decode("utf-8", "replace").strip()
        raise LLMError(f"{url} answered HTTP {exc.code}: {detail or exc.reason}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LLMError(f"cannot reach {url} ({reason}) — start the server or fix [llm] base_url "
                       f"in .vaultmem/config.toml") from None
    try:
        return json.loads(payload)["choices"][0]["message"]["content"] or ""
    except (ValueError, KeyError, IndexError, TypeError):
        raise LLMError(f"{url} did not answer with a chat completion") from None


def _strip_fence(text: str) -> str:
    """Some servers wrap JSON in a ``` fence even when asked for a JSON object."""
    text = (text or "").strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
