"""Safe note titles: file-name- and link-safe titles (`safe_title`), and refusing an unsafe
one a person gave (`check_title`)."""

from __future__ import annotations

import re
import unicodedata

from vaultmem.errors import UnsafeName

# Obsidian link syntax and OS path characters that a file name must not hold (SPEC §3).
_FORBIDDEN = re.compile(r'[#|^:%\[\]/\\<>"?*\x00-\x1f\x7f]')
_RATIO = re.compile(r"(?<=\d):(?=\d)")
_PERCENT = re.compile(r"(?<=\d)%(?!%)")
_RESERVED = {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", *(f"COM{i}" for i in range(1, 10)),
             *(f"LPT{i}" for i in range(1, 10))}
MAX_TITLE = 80
# File systems count bytes (ext4, APFS: 255) or UTF-16 units (NTFS: 255), and 80 emoji are
# 320 UTF-8 bytes: leave room for unique_path's " 99" and ".md" whatever the script.
MAX_TITLE_BYTES = 200


def safe_title(text: str, fallback: str = "Untitled") -> str:
    """A file-name-safe, link-safe title: no `# | ^ : %% [[ ]] / \\`, no leading dots,
    no reserved Windows names, at most MAX_TITLE characters, cut at a word boundary; a
    colon between digits and a percent sign after one keep their look.

    >>> safe_title("The user quit 16:8 fasting")
    'The user quit 16꞉8 fasting'
    """
    text = unicodedata.normalize("NFC", str(text))
    text = text.replace("%%", " ")
    # A ratio or a time and a percentage keep their sense: "16:8 fasting", "a 1:1 at 3:30",
    # "10% off" read as themselves with a look-alike (U+A789 ꞉, U+FF05 ％) no file system or
    # link refuses, where a space would leave "16 8 fasting".
    text = _RATIO.sub("\ua789", text)
    text = _PERCENT.sub("\uff05", text)
    text = _FORBIDDEN.sub(" ", text)
    text = _shorten(" ".join(text.split()).strip(" ."))
    # Windows ignores spaces before the extension: "CON .md" is the console too.
    if not text or text.split(".")[0].rstrip(" ").upper() in _RESERVED:
        text = _shorten(f"{fallback} {text}".strip()) if text else fallback
    return text


def _shorten(text: str) -> str:
    """At most MAX_TITLE characters and MAX_TITLE_BYTES UTF-8 bytes, cut at a word boundary."""
    if len(text) <= MAX_TITLE and len(text.encode("utf-8")) <= MAX_TITLE_BYTES:
        return text
    cut = text[:MAX_TITLE]
    while len(cut.encode("utf-8")) > MAX_TITLE_BYTES:
        cut = cut[:-1]
    return (cut.rsplit(" ", 1)[0] if " " in cut[20:] else cut).rstrip(" .,;")


def check_title(title: str) -> str:
    """Reject (rather than silently change) a user-given title that is unsafe; the message
    names what is wrong and suggests the safe form."""
    if "/" in title or "\\" in title:
        raise UnsafeName(f"title {title!r} contains a path separator — give a plain title, "
                         f"e.g. {safe_title(title)!r}")
    bad = sorted(set(_FORBIDDEN.findall(title.replace("%%", "%"))))
    if bad:
        shown = " ".join(repr(c)[1:-1] for c in bad)
        raise UnsafeName(f"title {title!r} contains characters Obsidian links cannot hold ({shown}) "
                         f"— remove them, e.g. {safe_title(title)!r}")
    if title != safe_title(title):
        raise UnsafeName(f"title {title!r} is not a safe file name (empty, leading dot, surrounding "
                         f"spaces, a reserved name or over {MAX_TITLE} characters) — "
                         f"use e.g. {safe_title(title)!r}")
    return title
