"""The model writes the memory: a session's turns and the memories already held that bear on
it go to the person's model (an OpenAI-compatible endpoint or a model CLI, `llm_endpoint`),
and one reply gives the session's memories, each with what it does to what is held (add,
update, merge into or ignore a held memory or an earlier item): mem0's decision, made in the
same request as the extraction.

The reply is validated item by item (`llm_reply`): a valid item is kept (its subject and
attribute put in the offline extractor's terms, so the same write policy supersedes on them),
an invalid one is left out and a field that is merely wrong (a date that is not one, an
importance above 1, a target that was not shown) is cleaned, each with a warning. Only a reply
that is not a JSON object with a "memory_items" list, or whose every item is invalid, fails
its request: one retry tells the model what was wrong, then the offline extractor decides that
part of the session. A session is one request when it fits `[llm] context_tokens` (`Budget`),
else consecutive parts of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime

from vaultmem.errors import LLMError
from vaultmem.extract.llm_endpoint import LLMSettings, chat
from vaultmem.extract.llm_prompt import HEADER_TOKENS, SYSTEM_PROMPT, Budget, budget, clip, estimate_tokens, line
from vaultmem.extract.llm_reply import HUB_KINDS, parse_memory_items, parse_secrets
from vaultmem.extract.llm_slots import normalise_slot
from vaultmem.policy.candidate import Candidate
from vaultmem.text.pattern_words import HEALTH

MAX_BATCH_TURNS = 400  # a request holds at most this many messages, however short


class ReplyError(LLMError):
    """The model's output did not validate, even after one retry."""


@dataclass
class Verdict:
    """What the model said a memory does to what is held: `action` add | update | merge |
    ignore, `target` the held memory (an `Existing`) or an earlier candidate of the same
    session (its index in `SessionOutcome.candidates`)."""

    action: str = "add"
    target: object = None
    also: list = field(default_factory=list)  # further memories an update replaces (same kinds as target)


@dataclass
class Held:
    """A memory already held, as the model is shown it."""

    entry: object   # a `policy.pool.Existing`
    dated: str = ""  # "since 2026-08-10", "said 2026-08-12"


def extract_llm(turns, session_time: datetime | None, settings, held=()) -> list[Candidate]:
    """Candidates for `turns` from the model, without the warnings about the items left out;
    raises `LLMError` on a failed call or when a request's output does not validate twice
    in a row (`extract_session` keeps the warnings and falls back instead)."""
    settings = LLMSettings.coerce(settings)
    shares = budget(settings.context_tokens)
    out: list[Candidate] = []
    for part in _batches(_spoken(turns), shares):
        out.extend(_extract_batch(part, session_time, settings, shares, list(held), len(out))[0])
    return out


def extract_with_fallback(turns, session_time: datetime | None, settings, user_names=None):
    """`(candidates, warnings)`: the model's valid items, a warning for each item left out or
    cleaned, and the offline extractor's candidates for what the model could not do: a part
    whose output did not validate twice, or, once the call failed, the rest of the session.
    A warning reads like "memory_items[3] left out: memory_items[3].type must be one of ..."."""
    outcome = extract_session(turns, session_time, settings, user_names)
    return outcome.candidates, outcome.warnings


@dataclass
class SessionOutcome:
    """What `extract_session` made of one session."""

    candidates: list
    warnings: list[str]
    endpoint_failed: bool = False  # the model refused or was unreachable: worth asking again later
    timed_out: bool = False        # `seconds` ran out; the rest went to the offline extractor
    fell_back: bool = False        # some part was decided by the rules (any reason): ask again later
    usage: dict = field(default_factory=dict)  # calls, prompt_tokens, completion_tokens
    shown: list = field(default_factory=list)  # the held memories (`Held`) the model saw
    secrets: list = field(default_factory=list)  # what the model marked secret, as the messages say it


def extract_session(turns, session_time: datetime | None, settings, user_names=None, *, held=(),
                    seconds: float = 0, clock=time.monotonic) -> SessionOutcome:
    """`extract_with_fallback` for one session beside the `held` memories (`Held`) that bear
    on it, also saying whether the model failed, and bounded in time: with `seconds` > 0,
    once the session has spent that long with the model (`[llm] session_seconds`) the turns
    not yet sent are decided by the offline extractor, and a warning says so. A request never
    waits past the bound (its timeout is cut to the time left)."""
    from vaultmem.extract.offline import extract_offline

    turns = list(turns)
    usage: dict = {}
    try:
        settings = LLMSettings.coerce(settings)
    except LLMError as exc:
        return SessionOutcome(extract_offline(turns, session_time, user_names), [_fell_back(exc)], True,
                              fell_back=True)
    shares = budget(settings.context_tokens)
    held = _fit_held(list(held), shares.held)
    batches = list(_batches(_spoken(turns), shares))
    out, warnings = [], []

    secrets: list[str] = []

    def ended(**flags) -> SessionOutcome:
        return SessionOutcome(out, warnings, fell_back=True, usage=usage, shown=held, secrets=secrets, **flags)

    deadline = clock() + seconds if seconds > 0 else None
    fell_back = False
    for i, batch in enumerate(batches):
        where = "" if len(batches) == 1 else f"messages {batch[0].id}–{batch[-1].id}: "
        rest = turns if i == 0 else [t for later in batches[i:] for t in later]
        left = None if deadline is None else deadline - clock()
        if left is not None and left <= 0:
            out.extend(extract_offline(rest, session_time, user_names))
            warnings.append(_timed_out(seconds, batch, batches[-1]))
            return ended(timed_out=True)
        asked = settings if left is None or left >= settings.timeout else replace(settings, timeout=left)
        try:
            cands, problems = _extract_batch(batch, session_time, asked, shares, held, len(out), usage, secrets)
        except ReplyError as exc:  # this part only: the next one may well validate
            todo = turns if len(batches) == 1 else batch
            out.extend(extract_offline(todo, session_time, user_names))
            warnings.append(where + _fell_back(exc))
            fell_back = True
            continue
        except LLMError as exc:  # the model is down or refuses: asking again would only wait
            out.extend(extract_offline(rest, session_time, user_names))
            if deadline is not None and clock() >= deadline:  # the bound, not the endpoint
                warnings.append(_timed_out(seconds, batch, batches[-1]))
                return ended(timed_out=True)
            warnings.append(where + _fell_back(exc))
            return ended(endpoint_failed=True)
        out.extend(cands)
        warnings.extend(where + problem for problem in problems)
    return SessionOutcome(out, warnings, fell_back=fell_back, usage=usage, shown=held, secrets=secrets)


def _timed_out(seconds: float, first, last) -> str:
    return (f"the model took longer than [llm] session_seconds ({seconds:g} s) on this session; messages "
            f"{first[0].id}–{last[-1].id} were decided by the offline extractor instead")


def _fell_back(exc: LLMError) -> str:
    return f"LLM extraction failed ({exc}); used the offline extractor instead, and the next run asks the model again"


def _spoken(turns) -> list:
    return [t for t in turns if (t.role or "user").lower() in ("user", "assistant") and t.text.strip()]


def _fit_held(held: list, tokens: int) -> list:
    """The held memories that fit `tokens`, taken in the order given (the nearest first) and
    shown oldest first, as they were said: the model reads a change as what came later."""
    out, used = [], 0
    for item in held:
        size = estimate_tokens(f"[H{len(out) + 1}] ({item.dated}) {item.entry.text}") + 1
        if used + size > tokens:
            break
        out.append(item)
        used += size
    return sorted(out, key=lambda item: getattr(item.entry, "valid_from", "") or "")


def _extract_batch(turns, session_time, settings: LLMSettings, shares: Budget, held: list, offset: int,
                   usage: dict | None = None, secrets: list | None = None) -> tuple[list[Candidate], list[str]]:
    """`(candidates, problems)` of one request; `ReplyError` when the reply is unusable twice.
    `offset`: how many candidates the session has before these (an item's "N2" is the
    second of this reply). What the reply marks secret is added to `secrets`."""
    from vaultmem.extract.llm_prompt import render_request

    ids = {t.id: t.text for t in turns}
    keys = {f"H{i}": item for i, item in enumerate(held, 1)}
    text = render_request(turns, session_time, [(k, h.entry.text, h.dated) for k, h in keys.items()],
                          shares.turns - HEADER_TOKENS)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]
    reply = chat(settings, messages, shares.reply, usage)
    try:
        items, problems = parse_memory_items(reply, ids, keys)
    except ValueError as first:  # both clipped, so the retry fits the context the request was sized for
        messages += [{"role": "assistant", "content": clip(reply, shares.retry * 2 // 3)},
                     {"role": "user", "content": f"That reply was invalid: {clip(str(first), shares.retry // 3)}. "
                                                 f"Answer again with only the corrected JSON object."}]
        reply = chat(settings, messages, shares.reply, usage)
        try:
            items, problems = parse_memory_items(reply, ids, keys)
        except ValueError as second:
            raise ReplyError(f"the model's output did not validate twice: {second}") from None
    marked, unmarked = parse_secrets(reply, ids.values(), [item["content"] for item in items])
    problems = problems + unmarked
    if secrets is not None:
        secrets.extend(s for s in marked if s not in secrets)
    speakers = {t.id: t.speaker for t in turns}
    out = []
    for item in items:
        speaker = speakers[item["source_messages"][0]]
        subject, attribute, value = normalise_slot(item["subject"], item["attribute"], item["value"], speaker)
        tags, importance = item["tags"], item["importance"]
        if HEALTH.search(item["content"]):  # as the offline extractor weighs and tags it
            tags, importance = list(dict.fromkeys([*tags, "health"])), max(importance, 0.9)
        # A hub note only for what a person would look up: names the model marks as people,
        # places, organisations, pets or works (a bare name, as a small model writes it, too).
        names = [e["name"] for e in item["entities"] if e["kind"] in (*HUB_KINDS, None)]
        def resolve(target):
            return keys[target].entry if isinstance(target, str) else (offset + target if target is not None else None)

        target = resolve(item["target"])
        cand = Candidate(content=item["content"], type=item["type"], importance=importance,
                         source_messages=item["source_messages"], entities=names,
                         subject=subject, attribute=attribute, value=value, title=item["title"],
                         alias=item.get("alias") or "",
                         valid_from=item["valid_from"], valid_to=item["valid_to"], tags=tags,
                         correction=item["correction"], speaker=speaker, origin="model",
                         verdict=Verdict(item["action"], target, [resolve(t) for t in item["also"]])
                         if item["action"] else None)
        out.append(cand)
    return out, problems


def _batches(turns, shares: Budget):
    """Consecutive turns in requests of at most `shares.turns` tokens (estimated) and
    MAX_BATCH_TURNS messages; a message too long for a request of its own is cut to fit."""
    room = shares.turns - HEADER_TOKENS
    batch, size = [], 0
    for turn in turns:
        length = estimate_tokens(line(turn, room)) + 1
        if batch and (size + length > room or len(batch) >= MAX_BATCH_TURNS):
            yield batch
            batch, size = [], 0
        batch.append(turn)
        size += length
    if batch:
        yield batch
