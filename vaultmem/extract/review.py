"""The model's word on updates: which memory already held a new one replaces, repeats or adds to.

The write rules (`policy.decide`) supersede a memory when a new one fills the same subject and
attribute with another value. Where they find no such slot (the decision is "created"), `extract
--llm` asks the model, as mem0 does: it sees each new memory of the session beside the memories
already held that are nearest to it, and says for each one

- `add`: new information;
- `update` of a held memory: the same thing about the same person, changed (a move, a new
  title, a corrected name, an opinion that turned); the held memory is superseded;
- `merge` into a held memory: it says what that memory says (perhaps in more words): the new
  turn is added to the held memory's sources;
- `ignore`: a held memory already says all of it; nothing is written.

One request per session, after the extraction: the model's own, or with `[llm] extractor =
"rules"` the offline extractor's (a small local model reads turns into memories worse than the
rules do, but can still tell whether a held memory is no longer true). The write policy checks every verdict
before it is carried out (`check`): a target the model was not shown, an update of a memory
that shares too little with the new one (no common slot and a low cosine), an update by a
statement of a change that did not happen ("thinking of moving"), or a merge of two memories
that are not near-duplicates, is refused and the rules' decision stands ("created": both kept),
with a warning. A reply that is not JSON, a timeout or an endpoint that fails leaves every
decision to the rules, and the run says so. Nothing is lost either way: an update keeps the old
memory, marked superseded, and a merge keeps the held memory's text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from vaultmem.errors import LLMError
from vaultmem.policy.decide import Decision
from vaultmem.policy.pool import Existing, Pool
from vaultmem.text.question_frames import about_someone_else

NEIGHBOURS = 3          # held memories shown beside each new one
SHOWN_FLOOR = 0.3       # a held memory less like the new one than this is not shown
UPDATE_FLOOR = 0.4      # an update of a memory this unlike the new one (and of another slot) is refused
MERGE_FLOOR = 0.7       # a merge or ignore needs a near-duplicate
MAX_HELD = 24           # held memories in one request, nearest first
REVIEW_TOKENS = 400     # the reply: about 25 tokens a decision

REVIEW_PROMPT = """You keep an AI agent's long-term memory about a user current.
You see memories already held (H1, H2, ...) and new memories from the latest conversation (N1, N2, ...).
The new memories were said after the held ones. For each new memory choose one action:
- "update": it replaces a held memory that is no longer true: the same thing about the same person
  with a new value (moved to another city, a new job or title, a corrected name or date, an opinion
  that changed). Give that held memory as "target".
- "merge": it says the same thing as a held memory, perhaps with more detail. Give "target".
- "ignore": a held memory already says all of it. Give "target".
- "add": anything else: new information, or information that can be true together with what is held.
A plan, a wish or a change that did not happen does not update anything: "add".
Return one JSON object and nothing else:
{"decisions": [{"new": "N1", "action": "add", "target": null}, {"new": "N2", "action": "update", "target": "H1"}]}"""

ACTIONS = ("add", "update", "merge", "ignore")


@dataclass
class Verdict:
    """What the model said of one new memory."""

    action: str
    target: Existing | None = None


@dataclass
class Review:
    """The model's verdicts by candidate (`id(candidate)`), and what went wrong on the way."""

    verdicts: dict
    warnings: list[str]


def review(candidates, vectors: dict, user: str, pool: Pool, ask) -> Review:
    """Ask the model (`ask(messages, max_tokens) -> str`) about the `candidates` that have held
    memories near them. `vectors`: `id(candidate)` -> its vector. An `LLMError` from `ask`,
    or a reply that does not parse, yields no verdicts and one warning."""
    shown: dict[str, Existing] = {}
    asked = []
    for cand in candidates:
        if not _open(cand, user, pool):
            continue
        near = pool.neighbours(user, vectors.get(id(cand)), NEIGHBOURS, SHOWN_FLOOR)
        if near:
            asked.append(cand)
            for entry, _score in near:
                shown.setdefault(entry.rel, entry)
    if not asked:
        return Review({}, [])
    held = list(shown.values())[:MAX_HELD]
    keys = {f"H{i}": entry for i, entry in enumerate(held, 1)}
    news = {f"N{i}": cand for i, cand in enumerate(asked, 1)}
    text = "Held memories:\n" + "\n".join(f"[{k}] {e.text}" for k, e in keys.items()) + \
           "\n\nNew memories:\n" + "\n".join(f"[{k}] {c.content}" for k, c in news.items())
    messages = [{"role": "system", "content": REVIEW_PROMPT}, {"role": "user", "content": text}]
    try:
        reply = ask(messages, REVIEW_TOKENS)
    except LLMError as exc:
        return Review({}, [f"the model's update decisions failed ({exc}); the write rules decided alone"])
    try:
        verdicts, problems = parse_decisions(reply, news, keys)
    except ValueError as exc:
        return Review({}, [f"the model's update decisions were unusable ({exc}); the write rules decided alone"])
    return Review(verdicts, problems)


def _open(cand, user: str, pool: Pool) -> bool:
    """Whether the rules may leave `cand` open: not refused, not a correction (the rules fix
    the detail it names) and filling no slot a held memory fills (the rules supersede it)."""
    if getattr(cand, "rejected_reason", None) or getattr(cand, "corrects", None) is not None:
        return False
    return not pool.slot_holders(user, getattr(cand, "subject", None), getattr(cand, "attribute", None))


def parse_decisions(text: str, news: dict, keys: dict) -> tuple[dict, list[str]]:
    """`(verdicts by id(candidate), problems)` of a reply; `ValueError` when it is not a JSON
    object with a "decisions" list. An item naming no new memory, an unknown action or a
    target that was not shown is left out with a problem line."""
    from vaultmem.extract.llm_reply import strip_fence

    try:
        data = json.loads(strip_fence(text))
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    items = data.get("decisions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ValueError('not a JSON object with a "decisions" list')
    verdicts, problems = {}, []
    for i, item in enumerate(items):
        where = f"decisions[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where} left out: not an object")
            continue
        new = _key(item.get("new"), news, "N")
        action = str(item.get("action") or "").strip().lower()
        if new is None:
            problems.append(f"{where} left out: {item.get('new')!r} is not a new memory's id")
            continue
        if action not in ACTIONS:
            problems.append(f"{where} left out: action {item.get('action')!r} is not one of {', '.join(ACTIONS)}")
            continue
        target = None
        if action != "add":
            target_key = _key(item.get("target"), keys, "H")
            if target_key is None:
                problems.append(f"{where} left out: {action} needs a held memory as target, not "
                                f"{item.get('target')!r}")
                continue
            target = keys[target_key]
        verdicts.setdefault(id(news[new]), Verdict(action, target))
    return verdicts, problems


def _key(given, known: dict, letter: str) -> str | None:
    """`N2` for "N2", "[N2]", "n2" or 2."""
    if isinstance(given, bool) or given is None:
        return None
    found = re.search(r"\d+", str(given))
    key = f"{letter}{int(found.group())}" if found else None
    return key if key in known else None


def check(decision: Decision, verdict: Verdict | None, pool: Pool, vector) -> tuple[Decision, str | None]:
    """The decision to carry out once the model has spoken, and a warning when its verdict was
    refused. Only a "created" decision of the rules is open to the model."""
    if verdict is None or decision.action != "created" or verdict.action == "add":
        return decision, None
    cand, target = decision.candidate, verdict.target
    if target not in pool.entries:  # superseded or merged away earlier in this run
        return decision, f"the model said {verdict.action} {target.rel}, which is no longer active; kept as new"
    score = _cosine(vector, target.vector)
    same_slot = bool(target.attribute) and (getattr(cand, "attribute", None) or "").lower() == target.attribute.lower()
    if verdict.action == "update":
        if not same_slot and not _related(cand.content, target.text, score):
            return decision, (f"the model said {cand.content[:50]!r} updates {target.rel}, which shares too little "
                              f"with it (cosine {score:.2f}, no topic in common); both kept")
        if about_someone_else(cand.content) and not about_someone_else(target.text):
            return decision, (f"the model said {cand.content[:50]!r} updates {target.rel}, but it is about "
                              f"someone else; both kept")
        if _unreal(cand.content):
            return decision, (f"the model said {cand.content[:50]!r} updates {target.rel}, but it speaks of a "
                              f"change that did not happen; both kept")
        if not _names_news(cand.content, target.text):
            return decision, (f"the model said {cand.content[:50]!r} updates {target.rel}, but it names nothing "
                              f"the held memory does not; both kept")
        if target.subject and target.attribute and ":" not in target.attribute and not getattr(cand, "attribute", None):
            cand.subject, cand.attribute = target.subject, target.attribute  # a later change finds the slot
        return Decision("superseded", f"the model: updates {target.rel} (cosine {score:.2f}); the old memory "
                                      "is kept as superseded", cand.content, decision.type, target,
                        candidate=cand), None
    if score < MERGE_FLOOR:
        return decision, (f"the model said {verdict.action} {cand.content[:50]!r} into {target.rel}, which is "
                          f"not a near-duplicate (cosine {score:.2f}); kept as new")
    if verdict.action == "merge":
        return Decision("updated", f"the model: says what {target.rel} says (cosine {score:.2f}); sources merged",
                        cand.content, decision.type, target, candidate=cand), None
    return Decision("unchanged", f"the model: already remembered in {target.rel} (cosine {score:.2f})",
                    cand.content, decision.type, target, candidate=cand), None


def _related(new: str, held: str, score: float) -> bool:
    """Whether `new` may replace `held`: both speak of one attribute the rules know (home,
    work, title, manager, diet, commute, learning, a tool of one kind), or, in English, they
    are close in meaning. Chinese needs the attribute: the bundled English model puts two
    Chinese sentences close whatever they say, and a small model then "updates" a memory of a
    son's maths class with a cousin's school."""
    from vaultmem.text.question_frames import TOPICS, speaks_of
    from vaultmem.text.script import is_chinese
    from vaultmem.text.values import tools_in

    topics = [*TOPICS, *{f"tool:{kind}" for _tool, kind in tools_in(new)}]
    if any(speaks_of(topic, new) and speaks_of(topic, held) for topic in topics):
        return True
    return not (is_chinese(new) or is_chinese(held)) and score >= UPDATE_FLOOR


def _names_news(new: str, held: str) -> bool:
    """Whether `new` names a value `held` does not (a place, an organisation, a tool, a name,
    a number; the days and times either is dated by do not count): a memory that goes on
    about the same thing ("The user misses teaching", 在地铁上看完了一本书) replaces nothing."""
    from vaultmem.text.question_frames import named_values

    def names(text):
        return named_values(_DAYS.sub(" ", text), loose=False)

    said = held.lower()
    return any(value not in said for value in names(new) - names(held))


_DAYS = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2})?|\d{4}年\d{1,2}月(?:\d{1,2}[日号])?|\d{1,2}月\d{1,2}[日号]|"
                   r"\b\d{1,2}:\d{2}\b")


def _cosine(a, b) -> float:
    import numpy as np

    if a is None or b is None:
        return -1.0
    return float(np.asarray(a, dtype=np.float32).ravel() @ np.asarray(b, dtype=np.float32).ravel())


def _unreal(text: str) -> bool:
    """A statement of a change that is only talked of: a plan, a hedge, a negation."""
    from vaultmem.text.frames import read

    reading = read(text)
    if reading is not None and reading.modality in ("hypothetical", "negated", "other"):
        return True
    return bool(_TALKED_OF.search(text))


_TALKED_OF = re.compile(r"\b(?:considering|thinking (?:about|of)|might|may|maybe|would like to|wants to|"
                        r"hopes to|plans? to|planning to|decided against|did not|didn't|no longer plans?|"
                        r"offered|an offer|offer (?:from|at)|sticking with|staying (?:with|put)|"
                        r"keeping (?:what|the|our|my|it)|still (?:with|on|at|using))\b|"
                        r"考虑|打算|想要?|可能|也许|没有?(?:搬|换|去)|不搬|不换|继续用|还是用|留在|不折腾", re.I)
