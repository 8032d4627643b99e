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

import time
from dataclasses import dataclass, replace
from datetime import datetime

from vaultmem.errors import LLMError
from vaultmem.extract.llm_endpoint import LLMSettings, chat
from vaultmem.extract.llm_prompt import (
    HEADER_TOKENS,
    MAX_BATCH_TOKENS,
    RETRY_TOKENS,
    SYSTEM_PROMPT,
    clip,
    estimate_tokens,
    line,
    render_turns,
)
from vaultmem.extract.llm_reply import parse_memory_items
from vaultmem.extract.llm_slots import normalise_slot
from vaultmem.policy.candidate import Candidate
from vaultmem.text.pattern_words import HEALTH

MAX_BATCH_TURNS = 80


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


def _batches(turns):
    """Consecutive turns in batches of at most MAX_BATCH_TOKENS (estimated) and MAX_BATCH_TURNS."""
    batch, size = [], HEADER_TOKENS
    for turn in turns:
        length = estimate_tokens(line(turn)) + 1
        if batch and (size + length > MAX_BATCH_TOKENS or len(batch) >= MAX_BATCH_TURNS):
            yield batch
            batch, size = [], HEADER_TOKENS
        batch.append(turn)
        size += length
    if batch:
        yield batch
