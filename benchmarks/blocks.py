"""What a `context` block spends its lines on (issue 50), read from the block's text and the
vault's session notes alone, so that the count does not take the product's word for it:

- `hub_lines`: lines of an entity hub that says nothing but its name (vaultmem's generated
  hub body);
- `repeats`: excerpts showing a turn that a memory line of the same block cites as its source;
- `overlaps`: pairs of excerpts of one session showing a common turn.

An excerpt's turns are found by its lines' words in the session note its link names (a
line is a turn's first words, or a window of it: "… words …"; its first line is the turn the
link names, each next line the first turn after the one before that holds its words).

    >>> audit = BlockAudit(vault_root)                 # doctest: +SKIP
    >>> audit.count(block_text)                         # doctest: +SKIP
    {'hub_lines': 0, 'repeats': 0, 'overlaps': 0}
"""

from __future__ import annotations

import re
from pathlib import Path

from vault_audit import MEMORY_KINDS
from vaultmem.index.chunking import plain
from vaultmem.store import parse_session_turns, read_note

HUB = re.compile(r"Hub note: memories that mention .+ link here \(see backlinks\)\.?\s*$")
LINK = re.compile(r"\[\[([^\]#|]+)#\^([A-Za-z0-9-]+)")
KINDS = MEMORY_KINDS + ("entity",)   # the types a memory line's meta names
PROBE_WORDS = 12


def bullets(block: str) -> list[tuple[str, str]]:
    """(meta, text) of each bullet of a block, continuation lines joined with newlines."""
    out: list[list[str]] = []
    for line in block.splitlines():
        if line.startswith("- ["):
            meta, _, text = line[3:].partition("] ")
            out.append([meta, text])
        elif line.startswith("  ") and out:
            out[-1][1] += "\n" + line.strip()
        elif line.startswith("#") or not line.strip():
            out.append(["", ""])
    return [(m, t) for m, t in out if m]


def kind_of(meta: str) -> str | None:
    """The memory type a bullet's meta names, else None (an excerpt or a note passage)."""
    parts = [p.strip() for p in meta.split("·")]
    return next((p for p in parts if p in KINDS), None)


class BlockAudit:
    def __init__(self, vault: Path):
        self.vault = Path(vault)
        self._turns: dict[str, list] = {}

    def turns_of(self, session: str) -> list:
        """The turns (block_id, text) of the session note named `session`."""
        name = session.rsplit("/", 1)[-1]
        if name not in self._turns:
            found = next(iter((self.vault / "Memory" / "Sessions").rglob(f"{name}.md")), None) \
                if (self.vault / "Memory" / "Sessions").is_dir() else None
            try:
                turns = parse_session_turns(read_note(found).body) if found else []
            except (OSError, ValueError):
                turns = []
            # as an excerpt shows a turn: its Markdown read as plain words (`chunking.plain`)
            self._turns[name] = [(t.block_id, " ".join(plain(t.text).split())) for t in turns]
        return self._turns[name]

    def shown_turns(self, meta: str, text: str) -> tuple[str, set[str]]:
        """(session, the block ids of the turns) an excerpt bullet shows."""
        link = LINK.search(meta)
        if not link:
            return "", set()
        session = link.group(1).rsplit("/", 1)[-1]
        turns = self.turns_of(session)
        shown, after = set(), -1
        for number, line in enumerate(text.splitlines()):
            said = line.split(": ", 1)[1] if ": " in line else line
            words = [w for w in said.split() if w != "…"][:PROBE_WORDS]
            if not words:
                continue
            probe = " ".join(words)
            found = [i for i, (_, whole) in enumerate(turns) if probe in whole]
            if not found:
                continue
            # Words many turns share ("Here's an updated version of the sheet"): the first line is
            # the turn its link names, each next one the first such turn after the one before.
            named = [i for i in found if turns[i][0] == link.group(2)] if number == 0 else []
            later = [i for i in found if i > after]
            at = (named or later or found)[0]
            shown.add(turns[at][0])
            after = at
        return session, shown

    def count(self, block: str) -> dict:
        cited, excerpts, hubs = set(), [], 0
        for meta, text in bullets(block):
            kind = kind_of(meta)
            if kind == "entity" and HUB.search(text.split("\n", 1)[0]):
                hubs += 1
            if kind:
                cited |= {(s.rsplit("/", 1)[-1], b) for s, b in LINK.findall(text)}
            elif LINK.search(meta):
                excerpts.append(self.shown_turns(meta, text))
        repeats = sum(bool({(s, b) for b in turns} & cited) for s, turns in excerpts)
        overlaps = sum(1 for i, (s, a) in enumerate(excerpts) for t, b in excerpts[i + 1:]
                       if s == t and a & b)
        return {"hub_lines": hubs, "repeats": repeats, "overlaps": overlaps}
