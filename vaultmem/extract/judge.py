"""The model judges, the policy checks: what a memory the model wrote does to what is held.

With the model writing the memory (`extract/llm.py`), each memory comes with the model's word
on the held memories it was shown (`Verdict`): add, update, merge into or ignore one of them
or an earlier memory of the same reply. Sameness and change are the model's call: the write
rules' guesses (a near-duplicate by cosine, a slot filled with another value) give way to it
wherever the model saw the memory they point at. What stays with the policy are the checks a
model cannot be trusted with: a statement screened out (a secret, noise) stays out; a target
must be one the model was shown (`llm_reply`); a memory already built from the very same
messages is not written twice (a re-run); an update of a memory it shares nothing with (no
word, no slot, far in meaning, and not among the held memories it was shown that lie nearest
it: `near`) is refused; superseding keeps the old note, marked superseded
(`memory/write.py`). Each refusal is said in the run's output with its reason.
"""

from __future__ import annotations

import re

from vaultmem.extract.llm_slots import PROMPT_SLOTS
from vaultmem.extract.review import _cosine
from vaultmem.policy.decide import Decision
from vaultmem.policy.pool import Existing, Pool

NEAREST = 6        # held memories shown for each user message of a session
SHOWN_FLOOR = 0.3  # a held memory less like every message than this is not shown
MAX_SHOWN = 80     # held memories in one request, nearest first (the budget may take fewer)
UNRELATED = 0.35   # below this cosine, an update must share a word or a slot with its target,
# or be one of the NEAR_RANK held memories the model was shown that lie nearest the new one, at
# NEAR or more: a change of holder ("The user's boss is Caitlin" for "Howard is the GM") or of
# choice (Singapore Airlines for a Cathay lounge) shares no word and sits at 0.28-0.33, while
# a memory the model points at by mistake lies further, or below others it was shown.
NEAR = 0.25
NEAR_RANK = 2


def held_for(turns, pool: Pool, user: str, encode) -> list:
    """The held memories that bear on a session, nearest first: for each message of the
    user, the memories closest to it (`encode(texts) -> vectors`), then the user's memories
    that fill a slot. `extract.llm.Held`s."""
    from vaultmem.extract.llm import Held

    texts = [" ".join(t.text.split())[:2000] for t in turns
             if (t.role or "user").lower() == "user" and t.text.strip()]
    if not texts or not any(e.user == user for e in pool.entries):
        return []
    best: dict[int, tuple[Existing, float]] = {}
    for vector in encode(texts):
        for entry, score in pool.neighbours(user, vector, NEAREST, SHOWN_FLOOR):
            if score > best.get(id(entry), (None, -1.0))[1]:
                best[id(entry)] = (entry, score)
    ranked = sorted(best.values(), key=lambda pair: -pair[1])
    # And what changes most: the user's memories that fill a slot (home, work, a relation),
    # newest first, though the session never names them ("we moved last week").
    slots = [e for e in reversed(pool.entries) if e.user == user and e.attribute and id(e) not in best]
    ranked = (ranked + [(entry, 0.0) for entry in slots])[:MAX_SHOWN]
    return [Held(entry, f"since {entry.valid_from}" if entry.valid_from else "") for entry, _ in ranked]


def judge(decision: Decision, pool: Pool, vector, shown: set, made: dict) -> tuple[Decision, str | None]:
    """The decision to carry out for a memory the model wrote, and a warning when the model's
    verdict was refused. `shown`: ids of the held memories the model saw; `made`: id of each
    candidate of the session decided so far -> the memory (`Existing`) it became or restated."""
    cand = decision.candidate
    verdict = getattr(cand, "verdict", None)
    if verdict is None or decision.action in ("rejected", "unchanged"):
        return decision, None  # screened out, or already remembered from these very messages
    target = verdict.target
    if target is not None and not isinstance(target, Existing):  # an earlier memory of the reply
        target = made.get(id(target))
        if target is None:
            return decision, (f"the model said {cand.content[:50]!r} {verdict.action}s an earlier memory of "
                              f"its reply that was not written; the rules decided")
    if verdict.action == "update" and verdict.also:
        target = _lead(cand, vector, verdict, target, made, pool, shown)
    if verdict.action == "add":
        held = decision.target
        if held is not None and id(held) in shown and pool.exact(held.user, cand.content) is not held:
            return Decision("created", f"the model: new information, true beside {held.rel} (the rules "
                                       f"took it for {decision.action} of it)", cand.content, decision.type,
                            candidate=cand), None
        return decision, None
    score = _cosine(vector, target.vector)
    if unrelated(cand, target, score) and not near(target, vector, pool, shown):
        return decision, (f"the model said {cand.content[:50]!r} {verdict.action}s {target.rel}, which it "
                          f"shares nothing with (no word, no slot, cosine {score:.2f}); the rules decided")
    if verdict.action == "ignore":
        return Decision("unchanged", f"the model: already remembered in {target.rel}", cand.content,
                        decision.type, target, candidate=cand), None
    if target.subject and target.attribute and not getattr(cand, "attribute", None):
        cand.subject, cand.attribute = target.subject, target.attribute  # a later change finds the slot
    if verdict.action == "merge":
        return Decision("superseded", f"the model: says what {target.rel} says, in full; it replaces it "
                                      "(kept as superseded)", cand.content, decision.type, target,
                        candidate=cand, still_true=True), None
    return Decision("superseded", f"the model: updates {target.rel}; the old memory is kept as superseded",
                    cand.content, decision.type, target, candidate=cand), None


def near(target: Existing, vector, pool: Pool, shown: set) -> bool:
    """Whether `target` is among the NEAR_RANK memories the model was shown that lie nearest
    `vector` (the new memory's), at a cosine of NEAR or more."""
    score = _cosine(vector, target.vector)
    if vector is None or id(target) not in shown or score < NEAR:
        return False
    nearer = sum(1 for e in pool.entries if id(e) in shown and e is not target and _cosine(vector, e.vector) > score)
    return nearer < NEAR_RANK


def _lead(cand, vector, verdict, target, made: dict, pool: Pool, shown: set):
    """Of the memories an update replaces, the one it is carried out on: the first still held
    that the new memory is related to (the model lists "is about to leave Lantu" before "works
    at Lantu" for "works at Heying": the job leads, and the plan goes with it as sharing
    "Lantu"). The others stay in `verdict.also`, each checked against the new memory and the
    lead (`Extraction._replace_also`)."""
    listed = [target] + [t if isinstance(t, Existing) else made.get(id(t)) for t in verdict.also]
    held = set(map(id, pool.entries))
    for entry in listed:
        if isinstance(entry, Existing) and id(entry) in held and (
                not unrelated(cand, entry, _cosine(vector, entry.vector)) or near(entry, vector, pool, shown)):
            if entry is not target:
                verdict.also = [t for t in listed if t is not entry and t is not None]
            return entry
    return target


def unrelated(cand, target: Existing, score: float | None) -> bool:
    """An update or merge that shares nothing with its target: no content word (Chinese: no
    two characters in a row), not the same slot, and far in meaning (`score`, the cosine;
    None: not known)."""
    if score is not None and score >= UNRELATED:
        return False
    if kin_slots(getattr(cand, "attribute", None), target.attribute):
        return False
    return not share_words(cand.content, target.text)


def kin_slots(a: str | None, b: str | None) -> bool:
    """Whether two of the model's attribute names name one slot: the same, or one the other
    with more words after it ("learning" and "learning_language": the model names a slot
    afresh in each session)."""
    a, b = (a or "").lower(), (b or "").lower()
    if not (a and b):
        return False
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    # A name of the model's own that opens with one the prompt gives names another slot
    # ("home_office", "job_history", "diet_goal").
    return ":" not in short and short not in PROMPT_SLOTS and long.startswith(short + "_")


def share_words(a: str, b: str) -> bool:
    """Whether two statements share a content word (Chinese: two characters in a row)."""
    return bool(_words(a) & _words(b))


_COMMON = set("the user user's users and that with from this have has had was were are is for "
              "they their them she her his him who what when".split()) | {"用户"}


def _words(text: str) -> set[str]:
    latin = {w for w in re.findall(r"[a-z0-9][a-z0-9'-]{2,}", text.lower())}
    han = "".join(re.findall(r"[\u4e00-\u9fff]", text))
    return (latin | {han[i:i + 2] for i in range(len(han) - 1)}) - _COMMON
