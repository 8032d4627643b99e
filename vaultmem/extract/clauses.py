"""A sentence that sets several things, as one clause per thing (`split_slots`), so that a
later change of one supersedes it alone.
"""

from __future__ import annotations

import re

from vaultmem.text.pattern_words import JOBS
from vaultmem.text.patterns import Detection, detect

_HOUSEHOLD = re.compile(r"^(.*\b(?:live|lives|living|moved|based|settled)\s+(?:in|to)\s+(?:the\s+)?"
                        r"[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*)\s+with\s+((?:my|our)\s+.+)$", re.I)


def split_slots(sentence: str, chinese: bool) -> list[str]:
    """A sentence that sets several things ("I'm Ravi, I work as a test engineer at Kestrel
    and I live in Cleveland"; "我叫林嘉怡，在成都的锦程新能源做财务分析师") as one clause per
    thing, so each is a memory of its own that a later change can supersede alone. Clauses
    that set nothing stay with the clause before them; a sentence that sets at most one
    thing is returned whole."""
    household = _HOUSEHOLD.match(sentence) if not chinese else None
    if (household and re.search(r"\b[A-Z][a-z]+", household.group(2))
            and (detect(household.group(1), False) or Detection("", "")).attribute == "home"):
        # "I live in Cleveland with my partner Noor": a move changes the first, not the second
        # (only where someone is named: "with my partner" alone says little on its own)
        return [household.group(1), "I live with " + household.group(2)]
    parts = re.split(r"(，|,\s+)", sentence)
    if len(parts) < 3:
        return [sentence]
    clauses, seps = parts[0::2], parts[1::2]
    kinds = [_clause_slot(c, chinese, first=i == 0) for i, c in enumerate(clauses)]
    if len({k for k in kinds if k}) < 2:
        return [sentence]
    out: list[str] = []
    for i, (clause, kind) in enumerate(zip(clauses, kinds)):
        if out and not kind:
            out[-1] += seps[i - 1] + clause
        else:
            out.append(_with_subject(clause, chinese) if i else clause)
    return out


def _clause_slot(clause: str, chinese: bool, first: bool) -> str | None:
    """The attribute a clause sets on its own (with its subject supplied), or None."""
    found = detect(clause if first else _with_subject(clause, chinese), chinese)
    return found.attribute if found and found.attribute else None


def _with_subject(clause: str, chinese: bool) -> str:
    """"在成都的锦程做分析师" -> "我在成都的锦程做分析师"; "backend developer at Pellucid" ->
    "I'm a backend developer at Pellucid": the subject a listing leaves out."""
    clause = clause.strip()
    if chinese:  # "叫咪咪" names what the clause before it named, not the speaker
        return clause if clause.startswith(("我", "他", "她", "叫", "是", "也", "还", "就", "都", "又")) \
            else "我" + clause
    if re.match(r"(?i)(?:an? )?(?:[\w-]+ ){0,3}(?:%s)s?\b" % "|".join(JOBS), clause) \
            and not re.match(r"(?i)(?:I|we|my|he|she|they)\b", clause):
        return "I'm " + ("" if re.match(r"(?i)an? ", clause) else "a ") + clause
    return clause
