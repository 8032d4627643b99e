"""The LLM extractor: an OpenAI-compatible chat-completions endpoint turns turns into `Candidate`s.

Plain urllib, no client library: any server that speaks `/chat/completions` works (OpenAI,
llama.cpp, Ollama, vLLM). The model's output is validated item by item: a valid item is kept
(its subject and attribute put in the offline extractor's terms, so the same write policy
supersedes on them), an invalid one is left out and a field that is merely wrong (a date that
is not one, an importance above 1) is cleaned, each with a warning. Only a reply that is not
a JSON object with a "memory_items" list, or whose every item is invalid, fails its batch:
one retry tells the model what was wrong, then `extract_with_fallback` uses the offline
extractor for that batch alone. Batches and `max_tokens` are sized so a request and its retry
fit a 4,096-token context (CONTEXT_TOKENS).
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from datetime import date, datetime

from vaultmem.errors import LLMError
from vaultmem.policy.candidate import Candidate
from vaultmem.store.layout import STATEMENT_TYPES
from vaultmem.text.pattern_words import HEALTH, PETS, RELATIONS

# Sized for a small local server (llama.cpp's common --n_ctx 4096): the system prompt, one
# batch of transcript, a retry's echo of the bad reply and its reasons, and the reply itself
# (MAX_TOKENS, so a runaway reply ends) must fit CONTEXT_TOKENS together.
CONTEXT_TOKENS = 4096
MAX_TOKENS = 1024  # sent as max_tokens with every request
RETRY_TOKENS = 600  # the bad reply echoed back and what was wrong with it, both clipped to fit
OVERHEAD_TOKENS = 64  # the chat template's role markers
MAX_BATCH_TURNS = 80
DEFAULT_IMPORTANCE = 0.5  # for an item the model gave none

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


class ReplyError(LLMError):
    """The model's output did not validate, even after one retry."""


def extract_llm(turns, session_time: datetime | None, settings) -> list[Candidate]:
    """Candidates for `turns` from the LLM, without the warnings about the items left out;
    raises `LLMError` on HTTP/connection failure or when a batch's output does not validate
    twice in a row (`extract_with_fallback` keeps the warnings and falls back instead)."""
    settings = LLMSettings.coerce(settings)
    out: list[Candidate] = []
    for batch in _batches(_spoken(turns)):
        out.extend(_extract_batch(batch, session_time, settings)[0])
    return out


def extract_with_fallback(turns, session_time: datetime | None, settings, user_names=None):
    """`(candidates, warnings)`: the LLM's valid items, a warning for each item left out or
    cleaned, and the offline extractor's candidates for what the LLM could not do: a batch
    whose output did not validate twice, or, once the endpoint failed, the rest of the session.
    A warning reads like "memory_items[3] left out: memory_items[3].type must be one of ..."."""
    outcome = extract_session(turns, session_time, settings, user_names)
    return outcome.candidates, outcome.warnings


@dataclass
class SessionOutcome:
    """What `extract_session` made of one session."""

    candidates: list
    warnings: list[str]
    endpoint_failed: bool = False  # the endpoint refused or was unreachable: worth asking again later
    timed_out: bool = False        # `seconds` ran out; the rest went to the offline extractor


def extract_session(turns, session_time: datetime | None, settings, user_names=None, *,
                    seconds: float = 0, clock=time.monotonic) -> SessionOutcome:
    """`extract_with_fallback` for one session, also saying whether the endpoint failed, and
    bounded in time: with `seconds` > 0, once the session has spent that long with the model
    (`[llm] session_seconds`) the turns not yet sent are decided by the offline extractor,
    and a warning says so. A request never waits past the bound (its timeout is cut to the
    time left)."""
    from vaultmem.extract.offline import extract_offline

    turns = list(turns)
    batches = list(_batches(_spoken(turns)))
    out, warnings = [], []
    try:
        settings = LLMSettings.coerce(settings)
    except LLMError as exc:
        return SessionOutcome(extract_offline(turns, session_time, user_names), [_fell_back(exc)], True)
    deadline = clock() + seconds if seconds > 0 else None
    for i, batch in enumerate(batches):
        where = "" if len(batches) == 1 else f"messages {batch[0].id}–{batch[-1].id}: "
        rest = turns if i == 0 else [t for later in batches[i:] for t in later]
        left = None if deadline is None else deadline - clock()
        if left is not None and left <= 0:
            out.extend(extract_offline(rest, session_time, user_names))
            warnings.append(_timed_out(seconds, batch, batches[-1]))
            return SessionOutcome(out, warnings, timed_out=True)
        asked = settings if left is None or left >= settings.timeout else replace(settings, timeout=left)
        try:
            cands, problems = _extract_batch(batch, session_time, asked)
        except ReplyError as exc:  # this batch only: the next one may well validate
            todo = turns if len(batches) == 1 else batch
            out.extend(extract_offline(todo, session_time, user_names))
            warnings.append(where + _fell_back(exc))
            continue
        except LLMError as exc:  # the endpoint is down or refuses: asking again would only wait
            out.extend(extract_offline(rest, session_time, user_names))
            if deadline is not None and clock() >= deadline:  # the bound, not the endpoint
                warnings.append(_timed_out(seconds, batch, batches[-1]))
                return SessionOutcome(out, warnings, timed_out=True)
            warnings.append(where + _fell_back(exc))
            return SessionOutcome(out, warnings, endpoint_failed=True)
        out.extend(cands)
        warnings.extend(where + problem for problem in problems)
    return SessionOutcome(out, warnings)


def _timed_out(seconds: float, first, last) -> str:
    return (f"the LLM took longer than [llm] session_seconds ({seconds:g} s) on this session; messages "
            f"{first[0].id}–{last[-1].id} were decided by the offline extractor instead")


def _fell_back(exc: LLMError) -> str:
    return f"LLM extraction failed ({exc}); used the offline extractor instead"


def _spoken(turns) -> list:
    return [t for t in turns if (t.role or "user").lower() in ("user", "assistant") and t.text.strip()]


def _echo_key(text: str) -> str:
    return re.sub(r"[^\w]+", " ", text.lower()).strip()


# The example statements SYSTEM_PROMPT quotes: a small model sometimes hands one back as a
# memory ("Caroline adopted a dog." in a conversation with no Caroline).
PROMPT_EXAMPLES = {_echo_key(q) for q in re.findall(r'"([A-Z][^"]{8,}[.!])"', SYSTEM_PROMPT)}


def parse_memory_items(text: str, known_ids) -> tuple[list[dict], list[str]]:
    """`(items, problems)` of a model reply: the items that validate, cleaned, and one line
    for each item left out or field cleaned. `ValueError` when the reply as a whole is
    unusable: not JSON, no "memory_items" list, or no item in it valid."""
    try:
        data = json.loads(strip_fence(text))
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the reply is not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("memory_items"), list):
        raise ValueError('the reply must be a JSON object with a "memory_items" list')
    known = set(known_ids)
    items, problems, refused = [], [], []
    for i, raw in enumerate(data["memory_items"]):
        try:
            items.append(_validate_item(raw, i, known, problems))
        except ValueError as exc:
            refused.append((i, str(exc)))
    if refused and not items:
        raise ValueError("; ".join(reason for _i, reason in refused))
    return items, [f"memory_items[{i}] left out: {reason}" for i, reason in refused] + problems


def _validate_item(item, i: int, known: set, problems: list[str]) -> dict:
    """One item, cleaned; `ValueError` when it cannot be kept. What was cleaned rather than
    refused (an importance out of range, a date that is not one, an unknown source id among
    known ones) is added to `problems`."""
    where = f"memory_items[{i}]"
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError(f"{where}.content must be a non-empty string")
    if _echo_key(content) in PROMPT_EXAMPLES:
        raise ValueError(f"{where}.content copies an example of the instructions, not the conversation")
    if item.get("type") not in STATEMENT_TYPES:
        raise ValueError(f"{where}.type must be one of {', '.join(STATEMENT_TYPES)}, not {item.get('type')!r}")
    importance = item.get("importance", DEFAULT_IMPORTANCE)
    if isinstance(importance, bool) or not isinstance(importance, (int, float)):
        raise ValueError(f"{where}.importance must be a number from 0 to 1, not {importance!r}")
    if not 0 <= importance <= 1:
        clamped = min(max(float(importance), 0.0), 1.0)
        problems.append(f"{where}.importance {importance!r} is outside 0–1; clamped to {clamped}")
        importance = clamped
    sources = item.get("source_messages")
    if isinstance(sources, str):  # "m-3" or "m-3, m-4" for ["m-3", "m-4"]
        sources = sources.split(",") if sources.strip() not in known else [sources]
    elif isinstance(sources, (int, float)) and not isinstance(sources, bool):
        sources = [sources]
    if not isinstance(sources, list) or not sources:
        raise ValueError(f"{where}.source_messages must be a non-empty list of message ids, "
                         f"not {_short(item.get('source_messages'))}")
    found = [(s, message_id(s, known)) for s in sources]
    unknown = [s for s, found_id in found if found_id is None]
    if len(unknown) == len(sources):
        raise ValueError(f"{where}.source_messages: {unknown[0]!r} is not a message id of this conversation")
    if unknown:
        problems.append(f"{where}.source_messages: dropped {', '.join(map(repr, unknown))}, not message "
                        f"ids of this conversation")
    clean = {"content": " ".join(content.split()), "type": item["type"], "importance": float(importance),
             "source_messages": list(dict.fromkeys(found_id for _s, found_id in found if found_id))}
    for key in ("entities", "tags"):
        value = item.get(key) or []
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list):
            problems.append(f"{where}.{key} is not a list of strings; left empty")
            value = []
        clean[key] = [v.strip() for v in value if isinstance(v, str) and v.strip()]
    for key in ("valid_from", "valid_to"):
        clean[key] = _date(item.get(key), f"{where}.{key}", problems)
    for key in ("subject", "attribute", "value"):
        value = item.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if value is not None and not isinstance(value, str):
            problems.append(f"{where}.{key} is not a string; left empty")
            value = None
        clean[key] = (value or "").strip() or None
    correction = item.get("correction", False)
    if not isinstance(correction, bool):
        problems.append(f"{where}.correction {correction!r} is not true or false; taken as false")
        correction = False
    clean["correction"] = correction
    return clean


def message_id(given, known) -> str | None:
    """The id of `known` that the model meant by `given`, or None. Small models write an id
    the way the prompt shows it (`render_turns`: "[m-3] 2026-08-22 09:18 Ravi (user): ..."),
    with "#" or "^" before it, in another case, or as its number alone.

    >>> message_id("[m-3] 2026-08-22 09:18 Ravi (user)", {"m-3", "m-4"})
    'm-3'
    >>> message_id(4, {"m-3", "m-4"})
    'm-4'
    """
    if isinstance(given, bool) or not isinstance(given, (str, int, float)):
        return None
    if isinstance(given, float):
        if not given.is_integer():
            return None
        given = int(given)
    text = str(given).strip()
    if text in known:
        return text
    words = [w.strip(":,;.\"'()") for w in re.sub(r"[\[\]#^]", " ", text).split()]
    folded = {k.lower(): k for k in known}
    for word in words:
        if word in known or word.lower() in folded:
            return word if word in known else folded[word.lower()]
    number = next((w for w in words if w.isdigit()), None)
    if number is not None:  # "3" for the one id that ends in 3: m-3, D1:3, j-3
        ends = [k for k in known if re.search(r"(?<!\d)0*" + str(int(number)) + r"$", k)]
        if len(ends) == 1:
            return ends[0]
    return None


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _date(value, where: str, problems: list[str]) -> date | None:
    """A YYYY-MM-DD date, or None for none given; a value that is not a real date is
    cleaned to None (the run then dates the item by its message) and reported."""
    if value in (None, ""):
        return None
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        problems.append(f"{where} {value!r} is not a YYYY-MM-DD date; left empty")
        return None


def _extract_batch(turns, session_time, settings: LLMSettings) -> tuple[list[Candidate], list[str]]:
    """`(candidates, problems)` of one request; `ReplyError` when the reply is unusable twice."""
    ids = [t.id for t in turns]
    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": render_turns(turns, session_time)}]
    reply = chat(settings, messages)
    try:
        items, problems = parse_memory_items(reply, ids)
    except ValueError as first:  # both clipped, so the retry fits the context the batch was sized for
        messages += [{"role": "assistant", "content": clip(reply, RETRY_TOKENS * 2 // 3)},
                     {"role": "user", "content": f"That reply was invalid: {clip(str(first), RETRY_TOKENS // 3)}. "
                                                 f"Answer again with only the corrected JSON object."}]
        reply = chat(settings, messages)
        try:
            items, problems = parse_memory_items(reply, ids)
        except ValueError as second:
            raise ReplyError(f"the model's output did not validate twice: {second}") from None
    speakers = {t.id: t.speaker for t in turns}
    out = []
    for item in items:
        speaker = speakers[item["source_messages"][0]]
        subject, attribute, value = normalise_slot(item["subject"], item["attribute"], item["value"], speaker)
        tags, importance = item["tags"], item["importance"]
        if HEALTH.search(item["content"]):  # as the offline extractor weighs and tags it
            tags, importance = list(dict.fromkeys([*tags, "health"])), max(importance, 0.9)
        out.append(Candidate(content=item["content"], type=item["type"], importance=importance,
                             source_messages=item["source_messages"], entities=item["entities"],
                             subject=subject, attribute=attribute, value=value,
                             valid_from=item["valid_from"], valid_to=item["valid_to"], tags=tags,
                             correction=item["correction"], speaker=speaker))
    return out, problems


# The LLM's words for a slot -> the offline extractor's name for it (extract/patterns.py), so
# a later statement supersedes an earlier one whichever extractor and wording made them.
_ATTRIBUTES = {
    "home": ("home", "city", "home_city", "current_city", "city_of_residence", "residence",
             "location_of_residence", "place_of_residence", "lives_in", "living_in", "lives", "address",
             "home_address", "居住地", "住址", "住在", "城市", "所在城市", "现居地"),
    "origin": ("origin", "hometown", "home_town", "from", "birthplace", "place_of_birth", "家乡", "老家"),
    "employer": ("employer", "company", "works_at", "work_at", "works_for", "workplace", "organization",
                 "organisation", "公司", "单位", "雇主", "工作单位"),
    "job": ("job", "job_title", "title", "role", "occupation", "profession", "position", "career", "work",
            "职业", "工作", "职位"),
    "name": ("name", "full_name", "first_name", "名字", "姓名"),
    "relationship": ("relationship", "relationship_status", "marital_status", "婚姻状况"),
    "diet": ("diet", "dietary_preference", "dietary_restriction", "饮食"),
    "editor": ("editor", "code_editor", "text_editor", "ide", "编辑器"),
}
_SYNONYMS = {word: name for name, words in _ATTRIBUTES.items() for word in words}
_LIKES = {"likes", "like", "loves", "love", "enjoys", "enjoy", "prefers", "preference", "喜欢", "爱"}
_DISLIKES = {"dislikes", "dislike", "hates", "hate", "不喜欢", "讨厌"}
_NO = {"no", "false", "dislike", "dislikes", "hate", "hates", "negative", "否", "不", "不喜欢", "讨厌"}
_THE_USER = {"i", "me", "my", "myself", "the user", "user", "the speaker", "我", "用户", "本人"}


def normalise_slot(subject: str | None, attribute: str | None, value: str | None,
                   speaker: str = "") -> tuple[str | None, str | None, str | None]:
    """The LLM's subject/attribute/value in the offline extractor's terms: subject "user" for
    the user, else the name as the offline side writes it (the policy compares slots
    case-blind), the message's speaker when the model named none; attribute synonyms onto
    the offline names, likes and dislikes onto `likes:<object>` = yes/no.

    >>> normalise_slot("I", "lives_in", "Denver")
    ('user', 'home', 'Denver')
    >>> normalise_slot("The user", "dislikes", "Running")
    ('user', 'likes:running', 'no')
    """
    from vaultmem.extract.speakers import display_name

    subject = " ".join((subject or "").split()).strip(" .")
    if subject.lower() in _THE_USER:
        subject = "user"
    if not attribute:
        return subject or None, None, value
    subject = subject or display_name(speaker, {}, False)[1]
    key = re.sub(r"[\s_-]+", "_", attribute.strip().lower()).strip("_")
    head, colon, obj = key.partition(":")
    obj = " ".join(obj.replace("_", " ").split())
    if not colon and head in _LIKES | _DISLIKES and value:
        head, obj, value = head, " ".join(value.lower().split()).strip(" ."), "yes"
    if obj and head in _LIKES | _DISLIKES:
        liked = (value or "yes").strip().lower() not in _NO
        return subject, f"likes:{obj}", "yes" if liked == (head in _LIKES) else "no"
    if head.startswith(("favorite_", "favourite_")) and not colon:
        head, obj = "favorite", head.split("_", 1)[1].replace("_", " ")
    elif head in ("favourite", "favorites", "favourites"):
        head = "favorite"
    elif head in RELATIONS and not colon:
        head, obj = "family", head
    elif head in PETS and not colon:
        head, obj = "pet", head
    else:
        head = _SYNONYMS.get(head, head)
    return subject, f"{head}:{obj}" if obj else head, value


def render_turns(turns, session_time: datetime | None) -> str:
    """The conversation as the model sees it: one line per message, id in brackets."""
    lines = []
    if session_time:
        lines.append(f"Session time: {session_time.isoformat(sep=' ', timespec='minutes')}")
    lines.append("Messages:")
    lines.extend(_line(t) for t in turns)
    return "\n".join(lines)


def _line(turn) -> str:
    """One message as the prompt shows it; a message too long for a batch of its own is cut."""
    when = f" {turn.time.isoformat(sep=' ', timespec='minutes')}" if getattr(turn, "time", None) else ""
    head = f"[{turn.id}]{when} {turn.speaker} ({turn.role}): "
    return head + clip(" ".join(turn.text.split()), MAX_BATCH_TOKENS - _HEADER_TOKENS - estimate_tokens(head))


_HEADER_TOKENS = 32  # "Session time: ...", "Messages:"


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


def _batches(turns):
    """Consecutive turns in batches of at most MAX_BATCH_TOKENS (estimated) and MAX_BATCH_TURNS."""
    batch, size = [], _HEADER_TOKENS
    for turn in turns:
        length = estimate_tokens(_line(turn)) + 1
        if batch and (size + length > MAX_BATCH_TOKENS or len(batch) >= MAX_BATCH_TURNS):
            yield batch
            batch, size = [], _HEADER_TOKENS
        batch.append(turn)
        size += length
    if batch:
        yield batch


def chat(settings: LLMSettings, messages: list[dict], max_tokens: int = MAX_TOKENS) -> str:
    """One chat-completions call; the reply's text."""
    url = settings.base_url.rstrip("/") + "/chat/completions"
    body = {"model": settings.model, "messages": messages, "temperature": 0, "max_tokens": max_tokens,
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


def strip_fence(text: str) -> str:
    """Some servers wrap JSON in a ``` fence even when asked for a JSON object."""
    text = (text or "").strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
