"""A search result: `Hit` (its `to_dict()` is the SPEC §5 HIT shape) and `Hits`, the list a
search returns, with `warning` set when the keyword fallback answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Hit:
    """One search result. `to_dict()` is the SPEC §5 HIT shape, plus `sources`: the links to
    where it came from (a memory's session turns; for a passage of the person's own note,
    `[[Title#Heading]]` or `[[Title#^block]]`, where a link to it should open)."""

    id: str
    path: str
    type: str
    title: str
    text: str
    score: float
    status: str
    created: str
    updated: str
    source_messages: list
    sources: list = field(default_factory=list)
    importance: float = 0.5
    parts: dict = field(default_factory=dict)
    valid_from: str = ""      # the day it was said ('' when unknown)
    valid_to: str = ""        # the last day it held ('' while it holds)
    tags: list = field(default_factory=list)
    superseded_by: list = field(default_factory=list)   # links, filled in by who shows them

    def to_dict(self) -> dict:
        out = {"id": self.id, "path": self.path, "type": self.type, "title": self.title,
               "text": self.text, "score": round(self.score, 4), "status": self.status,
               "created": self.created, "updated": self.updated,
               "valid_from": self.valid_from, "valid_to": self.valid_to,
               "source_messages": list(self.source_messages), "sources": list(self.sources)}
        if (self.parts or {}).get("rerank"):  # the place an LLM rerank gave it (`rerank.py`)
            out["rerank"] = self.parts["rerank"]
        return out


class Hits(list):
    """A list of Hit with `warning` set when the keyword fallback answered."""

    warning: str | None = None
