"""The memories a candidate is compared with: `Existing` (one active memory), `Pool` (one
user's, looked up by text, slot, sources and vector) and the likeness tests the decision
rules share (`normalise`, `known_sources`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice

from vaultmem.text.script import han_share

_FINAL_STOPS = re.compile(r"[\s.。!！]+$")


def normalise(text: str) -> str:
    """Content key for exact-duplicate checks: case, spacing and final punctuation ignored."""
    return _FINAL_STOPS.sub("", " ".join(str(text).lower().split()))


WORK = frozenset({"job", "employer"})


def sessions(links) -> set[str]:
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
    valid_from: str = ""  # YYYY-MM-DD: since when it holds (as the model is shown it)

    @property
    def slot(self) -> tuple[str, str, str] | None:
        if self.subject and self.attribute:
            return (self.user, self.subject.lower(), self.attribute.lower())
        return None


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
            if entry.user != user or not known_sources(entry, candidate, links, empty=False):
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
        linked, other = sessions(links), next(iter(WORK - {attribute}))
        return [e for e in self.entries
                if e.slot == (user, subject.lower(), other)
                and employer.lower() not in e.text.lower()
                and linked and not (sessions(e.sources) & linked)]

    def citing(self, user: str, candidate, links=None) -> Existing | None:
        """An active memory already built from the candidate's messages whose text still holds
        the candidate's statement: the user added to it by hand, so it is not news again."""
        text, keys = normalise(candidate.content), self._keys
        for entry in self.entries:
            if (entry.user == user and text in keys[id(entry)]
                    and known_sources(entry, candidate, links, empty=False)):
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


def _slot_of(candidate, user: str) -> tuple[str, str, str] | None:
    subject, attribute = getattr(candidate, "subject", None), getattr(candidate, "attribute", None)
    return (user, subject.lower(), attribute.lower()) if subject and attribute else None


def known_sources(entry: Existing, candidate, links=None, empty: bool = True) -> bool:
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


def _bigram_dice(a: str, b: str) -> float:
    def grams(text):
        chars = [c for c in normalise(text) if not c.isspace() and c not in "，。！？、,.!?"]
        return {a + b for a, b in zip(chars, chars[1:])}

    x, y = grams(a), grams(b)
    return 2 * len(x & y) / (len(x) + len(y)) if x and y else 0.0
