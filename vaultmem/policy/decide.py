"""The write policy shared by `add`, `extract`, the API and the MCP server.

Every proposed memory gets one decision: rejected (noise, venting, a secret), unchanged
(already remembered), updated (a near-duplicate: sources merged), superseded (same subject
and attribute, another value: the old note is kept, marked superseded) or created.
This module decides; `write.py` carries the decisions out on disk.

The rules for what is not a memory (greetings, fillers, one-off requests, venting) are read
from the words in `text/noise.py`; `screen` applies them to a whole text with the secret
rules, and the extractor's sentence classifier (`text/classify.py`) to single sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice

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
    cjk = sum(1 for ch in stripped if "\u4e00" <= ch <= "\u9fff")
    if len(stripped.split()) < 3 and cjk < 4:
        return "too short to be a memory"
    return None


def screen_request(text: str) -> str | None:
    """`screen` plus the turn-level rule that one-off requests ("can you summarise…") are not
    memories. Used on raw turns, not on statements an extractor already wrote."""
    reason = screen(text)
    if reason:
        return reason
    if is_request(text) and not STANDING.search(text):
        return "one-off request, not a standing instruction"
    return None


def _screen_names(candidate) -> str | None:
    """A secret in what would name or tag the note (its title, entity hubs, tags, slot value)
    keeps the whole memory out: a file name or a hub is never named after a secret."""
    fields = [getattr(candidate, "title", None), getattr(candidate, "value", None),
              *(getattr(candidate, "entities", None) or []), *(getattr(candidate, "tags", None) or [])]
    text = " \n ".join(str(f) for f in fields if f)
    if text and ("[REDACTED:" in text or find_secrets(text)):
        return "its title, tags or entities hold a secret; it stays out of memory"
    return None


_FINAL_STOPS = re.compile(r"[\s.。!！]+$")


def normalise(text: str) -> str:
    """Content key for exact-duplicate checks: case, spacing and final punctuation ignored."""
    return _FINAL_STOPS.sub("", " ".join(str(text).lower().split()))


WORK = frozenset({"job", "employer"})


def _sessions(links) -> set[str]:
    """The session notes (`Sessions/2026-11-29 chat`) that session-turn links point into."""
    from vaultmem.store.values import link_target

    return {str(link_target(s)).split("#", 1)[0] for s in links or ()}


@dataclass
class Existing:
    """An active memory the policy compares new candidates with."""

    id: str
    rel: str
    text: str
    type: str
    user: str
    subject: str = ""
    attribute: str = ""
    value: str = ""
    source_messages: list[str] = field(default_factory=list)
    vector: object = None  # unit-norm numpy vector, or None when not embedded
    sources: list[str] = field(default_factory=list)  # link targets of its `sources`

    @property
    def slot(self) -> tuple[str, str, str] | None:
        if self.subject and self.attribute:
            return (self.user, self.subject.lower(), self.attribute.lower())
        return None


@dataclass
class Decision:
    """What the policy decided for one candidate (reported by --json and --dry-run)."""

    action: str                       # created | updated | superseded | rejected | unchanged
    reason: str
    content: str
    type: str
    target: Existing | None = None    # the note updated or superseded
    path: str | None = None           # filled in when written
    id: str | None = None
    candidate: object = None

    def to_dict(self) -> dict:
        out = {"action": self.action, "reason": self.reason, "content": self.content,
               "type": self.type, "path": self.path, "id": self.id}
        if self.target is not None:
            out["target"] = self.target.rel
        sources = getattr(self.candidate, "source_messages", None)
        if sources:
            out["source_messages"] = list(sources)
        return out


class Pool:
    """The active memories of one user that candidates are compared against; a run adds
    what it creates, so two candidates of one run dedup against each other too."""

    def __init__(self, entries: list[Existing], dedup_threshold: float = 0.92,
                 retired: list[Existing] = ()):
        self.entries: list[Existing] = []
        self.threshold = dedup_threshold
        self.links = None  # the vault's links.LinkResolver, walked on first write (write.py)
        self._by_text: dict = {}
        # Each entry's `normalise`d text, and its vectors by (user, type): every candidate
        # is compared with every memory, which in a vault of 10,000 memories re-normalised
        # and dotted them one by one in Python for each candidate.
        self._keys: dict[int, str] = {}
        self._vectors: dict[tuple, _Vectors] = {}
        for entry in entries:
            self.add(entry)
        # Superseded memories: a candidate they were already built from is not news again
        # (re-running a transcript must not supersede its own later statement).
        self.retired: list[Existing] = list(retired)

    def add(self, entry: Existing) -> None:
        self.entries.append(entry)
        key = normalise(entry.text)
        self._keys[id(entry)] = key
        self._by_text[(entry.user, key)] = entry
        if entry.vector is not None:
            self._vectors.setdefault((entry.user, entry.type), _Vectors()).add(entry)

    def discard(self, entry: Existing) -> None:
        self.entries = [e for e in self.entries if e is not entry]
        self._by_text = {k: v for k, v in self._by_text.items() if v is not entry}
        self._keys.pop(id(entry), None)
        group = self._vectors.get((entry.user, entry.type))
        if group is not None:
            group.discard(entry)
        self.retired.append(entry)

    def exact(self, user: str, text: str) -> Existing | None:
        return self._by_text.get((user, normalise(text)))

    def retired_match(self, user: str, candidate, links=None) -> Existing | None:
        """A superseded memory stating what `candidate` states, from the same messages."""
        text = normalise(candidate.content)
        slot = _slot_of(candidate, user)
        for entry in self.retired:
            if entry.user != user or not _known_sources(entry, candidate, links, empty=False):
                continue
            if normalise(entry.text) == text or (
                    slot and entry.slot == slot
                    and (entry.value or "").strip().lower() == (candidate.value or "").strip().lower()):
                return entry
        return None

    def slot_holders(self, user: str, subject: str | None, attribute: str | None) -> list[Existing]:
        if not (subject and attribute):
            return []
        key = (user, subject.lower(), attribute.lower())
        return [e for e in self.entries if e.slot == key]

    def work_holders(self, user: str, candidate, links=None) -> list[Existing]:
        """Memories of the user's work that a later statement of it replaces although it
        fills the other slot: "I joined Orrin Robotics" (employer) after "I'm a developer at
        Pellucid" (job). Only across sessions (within one, the two complete each other) and
        only when the new employer is not the one the old memory names."""
        attribute = (getattr(candidate, "attribute", None) or "").lower()
        subject = getattr(candidate, "subject", None)
        if attribute not in WORK or not subject:
            return []
        employer = (candidate.value if attribute == "employer"
                    else next(iter(getattr(candidate, "entities", None) or []), None))
        if not employer:
            return []
        sessions, other = _sessions(links), next(iter(WORK - {attribute}))
        return [e for e in self.entries
                if e.slot == (user, subject.lower(), other)
                and employer.lower() not in e.text.lower()
                and sessions and not (_sessions(e.sources) & sessions)]

    def citing(self, user: str, candidate, links=None) -> Existing | None:
        """An active memory already built from the candidate's messages whose text still holds
        the candidate's statement: the user added to it by hand, so it is not news again."""
        text, keys = normalise(candidate.content), self._keys
        for entry in self.entries:
            if (entry.user == user and text in keys[id(entry)]
                    and _known_sources(entry, candidate, links, empty=False)):
                return entry
        return None

    def nearest(self, user: str, type: str, vector, candidate=None) -> tuple[Existing | None, float]:
        """The closest memory of this user and type by cosine; with `candidate`, only those
        that could mean the same thing (see `_may_be_same`)."""
        group = self._vectors.get((user, type))
        if vector is None or group is None:
            return None, -1.0
        for entry, score in group.by_score(vector):
            if candidate is None or _may_be_same(entry, candidate):
                return entry, score
        return None, -1.0

    def neighbours(self, user: str, vector, k: int, floor: float) -> list[tuple[Existing, float]]:
        """`(entry, cosine)` of the `k` memories of `user` nearest to `vector`, of any type,
        none below `floor`: the matrices `nearest` reads, one product per type."""
        if vector is None:
            return []
        found = []
        for (owner, _type), group in self._vectors.items():
            if owner != user:
                continue
            for entry, score in islice(group.by_score(vector), k):  # best first
                if score < floor:
                    break
                found.append((entry, score))
        found.sort(key=lambda pair: -pair[1])
        return found[:k]


class _Vectors:
    """The vectors of one user's memories of one type, as one matrix that grows in place:
    `by_score` is one matrix product, not a Python loop over every memory."""

    def __init__(self):
        self.entries: list = []
        self.rows: dict[int, int] = {}
        self.matrix = None
        self.alive = None

    def add(self, entry) -> None:
        import numpy as np

        vector = np.asarray(entry.vector, dtype=np.float32).ravel()
        n = len(self.entries)
        if self.matrix is None or self.matrix.shape[1] != vector.shape[0]:
            if self.matrix is not None and n:
                raise ValueError("memories of one pool must have vectors of one size")
            self.matrix = np.zeros((16, vector.shape[0]), dtype=np.float32)
            self.alive = np.zeros(16, dtype=bool)
        elif n == len(self.matrix):
            self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])
            self.alive = np.concatenate([self.alive, np.zeros_like(self.alive)])
        self.matrix[n], self.alive[n] = vector, True
        self.rows[id(entry)] = n
        self.entries.append(entry)

    def discard(self, entry) -> None:
        row = self.rows.pop(id(entry), None)
        if row is not None:
            self.alive[row] = False

    def by_score(self, vector):
        """(entry, cosine) best first; of equal scores, the one added first."""
        import numpy as np

        n = len(self.entries)
        if not n:
            return
        scores = self.matrix[:n] @ np.asarray(vector, dtype=np.float32).ravel()
        live = np.flatnonzero(self.alive[:n])
        for row in live[np.argsort(-scores[live], kind="stable")]:
            yield self.entries[row], float(scores[row])


def decide(candidate, user: str, pool: Pool, vector=None, links=None) -> Decision:
    """The decision for one candidate (an `extract.candidate.Candidate` or like it).

    `links` are the candidate's session-turn links (`[[Sessions/..#^m-3]]`) when known: they
    tell messages of different sessions apart, where bare message ids (`m-3`) may repeat.
    """
    content, ctype = candidate.content, candidate.type
    if getattr(candidate, "rejected_reason", None):
        return Decision("rejected", candidate.rejected_reason, content, ctype, candidate=candidate)
    reason = screen(content) or _screen_names(candidate)
    if reason:
        return Decision("rejected", reason, content, ctype, candidate=candidate)
    if getattr(candidate, "corrects", None) is not None:
        return _correction(candidate, user, pool, links)
    same = pool.exact(user, content)
    if same is not None:
        if not (getattr(candidate, "source_messages", None) or links):
            # `add` of a statement already remembered: the user said it again, so it is
            # reinforced (updated, importance kept at the max), not silently ignored.
            return Decision("updated", f"already remembered in {same.rel}; reinforced", content,
                            ctype, same, candidate=candidate)
        if _known_sources(same, candidate, links):
            return Decision("unchanged", f"already remembered in {same.rel}", content, ctype, same,
                            candidate=candidate)
        return Decision("updated", f"same statement as {same.rel}; sources merged", content, ctype,
                        same, candidate=candidate)
    old = pool.retired_match(user, candidate, links)
    if old is not None:
        return Decision("unchanged", f"already remembered in {old.rel} (superseded since)", content,
                        ctype, old, candidate=candidate)
    edited = pool.citing(user, candidate, links)
    if edited is not None:
        return Decision("unchanged", f"already remembered in {edited.rel} (edited since)", content,
                        ctype, edited, candidate=candidate)
    value = (getattr(candidate, "value", None) or "").strip().lower()
    holders = pool.slot_holders(user, getattr(candidate, "subject", None), getattr(candidate, "attribute", None))
    doubts = []  # memories this one may contradict, where the rules cannot tell: both are kept
    for holder in holders + pool.work_holders(user, candidate, links):
        held = (holder.value or "").strip().lower()
        if value and held and (han_share(value) > 0) != (han_share(held) > 0):
            # "北京" vs "Beijing": maybe one place in two scripts, maybe a move
            doubts.append(f"{holder.rel} ({candidate.attribute}: {holder.value} vs {candidate.value}, "
                          "in two scripts)")
            continue
        if value and held == value:
            if _known_sources(holder, candidate, links, empty=False):
                return Decision("unchanged", f"already remembered in {holder.rel}", content, ctype,
                                holder, candidate=candidate)
            return Decision("updated", f"restates {holder.rel}; sources merged", content, ctype,
                            holder, candidate=candidate)
        _keep_employer(candidate, holder)
        return Decision("superseded",
                        f"contradicts {holder.rel} ({candidate.attribute}: {holder.value or '?'} -> "
                        f"{candidate.value or '?'}); the old memory is kept as superseded",
                        candidate.content, ctype, holder, candidate=candidate)
    near, score = pool.nearest(user, ctype, vector, candidate)
    if near is not None and score >= pool.threshold:
        if _known_sources(near, candidate, links, empty=False):
            return Decision("unchanged", f"already remembered in {near.rel}", content, ctype, near,
                            candidate=candidate)
        return Decision("updated", f"near-duplicate of {near.rel} (cosine {score:.2f}); sources merged",
                        content, ctype, near, candidate=candidate)
    if near is not None and score >= DOUBT_COSINE and _CHANGE_WORDS.search(content):
        doubts.append(f"{near.rel} (cosine {score:.2f}, and this one speaks of a change)")
    if doubts:
        return Decision("created", "new memory; it may update " + "; ".join(doubts)
                        + " — the extractor cannot tell, so both are kept", content, ctype, candidate=candidate)
    return Decision("created", "new memory", content, ctype, candidate=candidate)


# A new memory this close to one it does not supersede, in words of change, may be an update
# the rules missed: the decision says so (both are kept; `vaultmem correct` settles it).
DOUBT_COSINE = 0.8
_CHANGE_WORDS = re.compile(r"\b(?:now|anymore|any more|no longer|switched|changed|moved|new|instead|"
                           r"these days|since)\b|现在|不再|换成|改成|搬到|新的|已经", re.I)


def _keep_employer(candidate, holder: Existing) -> None:
    """A promotion keeps the employer: "I'm quality engineering lead now" after "a senior
    test engineer at Kestrel Freight" says where only through the note it replaces, so the
    new memory names it ("... (still at Kestrel Freight)") rather than lose it."""
    if (candidate.attribute or "").lower() != "job" or not _PROMOTED.search(candidate.content):
        return
    chinese = han_share(holder.text) > 0
    found = re.search(r"在([\u4e00-\u9fffA-Za-z]{2,12}?)(?:做|当|工作|上班)" if chinese
                      else r"\b(?:at|for) ((?:[A-Z][\w&'.-]*)(?: [A-Z][\w&'.-]*)*)", holder.text)
    if not found or found.group(1) in candidate.content:
        return
    org = re.sub(r"^.{1,4}的(?=.{2,})", "", found.group(1)) if chinese else found.group(1).rstrip(".")
    body = candidate.content.rstrip("。.！!")
    candidate.content = f"{body}（仍在{org}）。" if chinese else f"{body} (still at {org})."
    candidate.entities = list(dict.fromkeys([*(candidate.entities or []), org]))


_PROMOTED = re.compile(r"\bpromot|升职|晋升|升为|升任", re.I)


def _correction(candidate, user: str, pool: Pool, links=None) -> Decision:
    """A turn that fixes one detail ("sorry, I meant Thursday"): the latest memory holding a
    detail of that kind, from the same session first, is superseded by its text with the
    detail fixed (so nothing else it said is lost). With no such memory the correction has
    nothing to correct and stays in the session note."""
    from vaultmem.policy.candidate import make_title
    from vaultmem.text.corrections import apply_correction

    fix = candidate.corrects
    for entry in pool.entries:
        if entry.user == user and _known_sources(entry, candidate, links, empty=False):
            return Decision("unchanged", f"already corrected in {entry.rel}", candidate.content,
                            candidate.type, entry, candidate=candidate)
    sessions = _sessions(links)
    mine = [e for e in pool.entries if e.user == user]
    for group in ([e for e in mine if _sessions(e.sources) & sessions], mine):
        for entry in reversed(group):  # the latest first: a run adds its memories in order
            fixed = apply_correction(entry.text, fix)
            if fixed is None:
                continue
            candidate.content, candidate.type, candidate.title = fixed, entry.type, make_title(fixed)
            if entry.subject and entry.attribute:
                candidate.subject, candidate.attribute = entry.subject, entry.attribute
                candidate.value = apply_correction(entry.value, fix) or candidate.value
            return Decision("superseded",
                            f"corrects {entry.rel} ({fix.old or 'the ' + fix.kind.replace('_', ' ')} -> "
                            f"{fix.new}); the old memory is kept as superseded",
                            fixed, entry.type, entry, candidate=candidate)
    return Decision("rejected", f"corrects a {fix.kind.replace('_', ' ')} no memory holds; "
                                "it stays in the session note", candidate.content, candidate.type,
                    candidate=candidate)


def _slot_of(candidate, user: str) -> tuple[str, str, str] | None:
    subject, attribute = getattr(candidate, "subject", None), getattr(candidate, "attribute", None)
    return (user, subject.lower(), attribute.lower()) if subject and attribute else None


def _known_sources(entry: Existing, candidate, links=None, empty: bool = True) -> bool:
    """Whether every message `candidate` comes from is already a source of `entry`: by
    session-turn link when both sides have them, else by message id. `empty`: the answer
    for a candidate without sources."""
    from vaultmem.store.values import link_target

    if links and entry.sources:
        return {str(link_target(s)) for s in links} <= set(entry.sources)
    ids = set(getattr(candidate, "source_messages", None) or [])
    return ids <= set(entry.source_messages) if ids else empty


def _may_be_same(entry: Existing, candidate) -> bool:
    """Could `entry` and `candidate` state the same thing? Not when both name what they set
    and that differs ("likes:green tea" vs "likes:spicy food": the embedding of two short
    sentences of one shape is close whatever their objects), and for CJK text not without
    shared wording (the bundled model knows little Chinese, so its cosines run high)."""
    attribute = (getattr(candidate, "attribute", None) or "").lower()
    if attribute and entry.attribute and entry.attribute.lower() != attribute:
        return False
    if han_share(candidate.content) >= 0.3 or han_share(entry.text) >= 0.3:
        return _bigram_dice(candidate.content, entry.text) >= 0.6
    return True


@lru_cache(maxsize=8192)
def han_share(text: str) -> float:
    """The share of CJK ideographs among a text's non-space characters (asked of every
    remembered memory for every candidate: cached, it was a tenth of an extraction's CPU)."""
    chars = len(text) - sum(map(str.isspace, text))
    return len(_IDEOGRAPHS.findall(text)) / chars if chars else 0.0


_IDEOGRAPHS = re.compile("[\u4e00-\u9fff]")


def _bigram_dice(a: str, b: str) -> float:
    def grams(text):
        chars = [c for c in normalise(text) if not c.isspace() and c not in "，。！？、,.!?"]
        return {a + b for a, b in zip(chars, chars[1:])}

    x, y = grams(a), grams(b)
    return 2 * len(x & y) / (len(x) + len(y)) if x and y else 0.0
