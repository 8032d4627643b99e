"""The write policy's decision rules, shared by `add`, `extract`, the API and the MCP server.

Every proposed memory gets one decision: rejected (noise, venting, a secret), unchanged
(already remembered), updated (a near-duplicate: sources merged), superseded (same subject
and attribute, another value: the old note is kept, marked superseded) or created.
This module decides; `memory/write.py` carries the decisions out on disk. What is not a memory is
`screen.py`'s to say; the memories a candidate is compared with are `pool.py`'s `Pool`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultmem.policy.pool import Existing, Pool, known_sources, sessions
from vaultmem.policy.redact import redact
from vaultmem.policy.screen import screen, screen_names
from vaultmem.text.script import han_share


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
    still_true: bool = False          # superseded by a fuller statement (a merge): no `valid_to`

    def to_dict(self) -> dict:
        # What a run prints: a statement refused for a secret is shown with the secret masked,
        # so the refusal is said without writing it into a log or an agent's context.
        content = redact(self.content)[0] if self.content and self.action == "rejected" else self.content
        out = {"action": self.action, "reason": self.reason, "content": content,
               "type": self.type, "path": self.path, "id": self.id}
        if self.target is not None:
            out["target"] = self.target.rel
        sources = getattr(self.candidate, "source_messages", None)
        if sources:
            out["source_messages"] = list(sources)
        return out


def decide(candidate, user: str, pool: Pool, vector=None, links=None) -> Decision:
    """The decision for one candidate (an `extract.candidate.Candidate` or like it).

    `links` are the candidate's session-turn links (`[[Sessions/..#^m-3]]`) when known: they
    tell messages of different sessions apart, where bare message ids (`m-3`) may repeat.
    """
    content, ctype = candidate.content, candidate.type
    if getattr(candidate, "rejected_reason", None):
        return Decision("rejected", candidate.rejected_reason, content, ctype, candidate=candidate)
    reason = screen(content) or screen_names(candidate)
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
        if known_sources(same, candidate, links):
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
            if known_sources(holder, candidate, links, empty=False):
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
        if known_sources(near, candidate, links, empty=False):
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
        if entry.user == user and known_sources(entry, candidate, links, empty=False):
            return Decision("unchanged", f"already corrected in {entry.rel}", candidate.content,
                            candidate.type, entry, candidate=candidate)
    linked = sessions(links)
    mine = [e for e in pool.entries if e.user == user]
    for group in ([e for e in mine if sessions(e.sources) & linked], mine):
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
