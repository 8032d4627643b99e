"""Find planted secret values wherever vaultmem could have put them: a vault's file names and
bytes (notes, `.vaultmem/`, `.git/`), every git object, the index rows, any text.

A value is searched in the forms a writer could store it in: as is, JSON- or YAML-escaped,
with its line breaks folded into spaces (the LLM prompt does that); a long value (24+
characters) by each half, so that a cut-off copy counts too. A value of digits only (a
PIN) is searched only in text and only as a whole number, so that it is not "found" inside
a hash, an id, a float or a binary index file. File names are also searched with the
punctuation taken out (a note title made from a secret loses its `!` and `/`).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from pathlib import Path

DIGITS_ONLY = re.compile(r"[\d#*\s-]+")
NOT_A_NAME_CHAR = re.compile(r"[^0-9A-Za-z\u4e00-\u9fff]")


def _bare(text: str) -> str:
    return NOT_A_NAME_CHAR.sub("", text)


def _bare_pieces(value: str) -> set[str]:
    """What of `value` a file name could keep: all its letters and digits, and for long
    values each 12-character run of them that mixes letters and digits."""
    bare = _bare(value)
    if len(bare) < 6:
        return set()
    pieces = {bare}
    if len(bare) >= 20:
        pieces |= {bare[i:i + 12] for i in range(len(bare) - 11)
                   if re.search(r"\d", bare[i:i + 12]) and re.search(r"[A-Za-z]", bare[i:i + 12])}
    return pieces


def _escaped(value: str) -> set[str]:
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
             re.sub(r"[^\x00-\x7f]", lambda m: f"\\u{ord(m.group()):04X}", value)}
    if value.split() != [value]:
        forms.add(" ".join(value.split()))
    return forms


def _forms(value: str) -> set[str]:
    out = set()
    for form in _escaped(value):
        if len(form) >= 24:
            out |= {form[:len(form) // 2], form[len(form) // 2:]}
        else:
            out.add(form)
    return out


class LeakFinder:
    """`finder.in_text(text)` / `finder.in_bytes(data)`: the planted values found there."""

    def __init__(self, values):
        values = list(dict.fromkeys(values))
        self._numbers = {v: re.compile(r"(?<![0-9A-Za-z._-])" + re.escape(v) + r"(?![0-9A-Za-z_]|\.\d)")
                         for v in values if DIGITS_ONLY.fullmatch(v)}
        self._text = {v: _forms(v) for v in values if v not in self._numbers}
        self._bytes = {v: {f.encode("utf-8") for f in forms} for v, forms in self._text.items()}
        pieces = {v: _bare_pieces(v) for v in self._text}
        shared = Counter(piece for found in pieces.values() for piece in found)
        # A piece that several values share (the ASN.1 header of PKCS#8 keys) names none of them.
        self._names = {v: {piece for piece in found if shared[piece] == 1} for v, found in pieces.items()}

    def in_text(self, text: str) -> list[str]:
        found = [v for v, forms in self._text.items() if any(f in text for f in forms)]
        return found + [v for v, pattern in self._numbers.items() if pattern.search(text)]

    def in_name(self, name: str) -> list[str]:
        bare = _bare(name)
        found = self.in_text(name)
        return found + [v for v, pieces in self._names.items()
                        if v not in found and any(piece in bare for piece in pieces)]

    def in_bytes(self, data: bytes) -> list[str]:
        try:
            return self.in_text(data.decode("utf-8"))
        except UnicodeDecodeError:  # binary (index data, packed git objects): no PIN search
            return [v for v, forms in self._bytes.items() if any(f in data for f in forms)]

    def in_vault(self, root: Path) -> list[tuple[str, str]]:
        """(where, value) for every value in the vault: file names and contents under it
        (`.vaultmem/` and `.git/` included), the names of files git once held, `git log -p
        --all`, every git object (loose, packed, unreachable) and every text column of the
        index rows."""
        leaks = []
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root).as_posix()
            leaks += [(f"file name {rel}", v) for v in self.in_name(rel)]
            if path.is_file():
                leaks += [(f"file {rel}", v) for v in self.in_bytes(path.read_bytes())]
        git = ["git", "-c", "core.quotePath=false"]
        names = subprocess.run([*git, "log", "--all", "--name-only", "--format="], cwd=root, capture_output=True,
                               text=True, check=True).stdout
        for rel in sorted(set(names.splitlines()) - {""}):
            if not (root / rel).exists():
                leaks += [(f"file name in git history {rel}", v) for v in self.in_name(rel)]
        log = subprocess.run([*git, "log", "-p", "--all"], cwd=root, capture_output=True, check=True).stdout
        leaks += [("git log -p --all", v) for v in self.in_bytes(log)]
        objects = subprocess.run([*git, "cat-file", "--batch-all-objects", "--batch"], cwd=root,
                                 capture_output=True, check=True).stdout
        leaks += [("git objects", v) for v in self.in_text(objects.decode("utf-8", "replace"))]
        from vaultmem.index.table import ChunkIndex

        for row in ChunkIndex(root).rows():
            for column, value in row.items():
                if isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
                    value = "\n".join(value)
                if isinstance(value, str):
                    leaks += [(f"index row {row.get('path')} {column}", v) for v in self.in_text(value)]
        return leaks
