"""Which embedding model suits a vault: the multilingual one where people write Chinese,
Japanese or Korean, the bundled English one otherwise.

    >>> cjk_share("用户住在上海, near the Bund")
    0.3529
"""

from __future__ import annotations

import os
from pathlib import Path

from vaultmem.store.config import DEFAULT_MODEL, MULTILINGUAL_MODEL
from vaultmem.text.script import CJK, LETTER, script_share

# A vault where this share of the letters is CJK gets the multilingual model: a Chinese word
# is one or two characters where an English one is five letters, so 0.2 is about a third of
# the words, enough that an English-only model would miss much of the vault.
CJK_VAULT_SHARE = 0.2
# How much of a vault is read to decide (the first notes found; enough to tell a language).
SAMPLE_FILES = 200
SAMPLE_BYTES = 4000
_SKIP = {".obsidian", ".trash", ".git", ".vaultmem", "node_modules"}
_LOCALES = ("zh", "ja", "ko")


def cjk_share(text: str) -> float:
    """The share of `text`'s letters that are CJK characters (0 when it has no letters)."""
    return round(script_share(text, among="letters", script=CJK), 4)


def vault_sample(root: Path) -> str:
    """The beginning of up to SAMPLE_FILES Markdown notes of the vault (hidden folders skipped)."""
    pieces = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".md"):
                try:
                    with open(Path(folder) / name, "rb") as handle:
                        pieces.append(handle.read(SAMPLE_BYTES).decode("utf-8", "replace"))
                except OSError:
                    continue
                if len(pieces) >= SAMPLE_FILES:
                    return "\n".join(pieces)
    return "\n".join(pieces)


def pick_model(root: Path, environ=None) -> tuple[str, str]:
    """(model, why) for a new vault at `root`: the multilingual model when its notes are
    mostly CJK, or when it has no notes yet and the locale is Chinese, Japanese or Korean."""
    environ = os.environ if environ is None else environ
    sample = vault_sample(root)
    share = cjk_share(sample)
    if sample.strip() and LETTER.search(sample):
        if share >= CJK_VAULT_SHARE:
            return MULTILINGUAL_MODEL, f"{share:.0%} of the vault's text is Chinese, Japanese or Korean"
        return DEFAULT_MODEL, "the vault's notes are in English or another alphabet"
    locale = next((environ.get(k) for k in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(k)), "")
    if locale.lower().startswith(_LOCALES):
        return MULTILINGUAL_MODEL, f"the vault is empty and the locale is {locale}"
    return DEFAULT_MODEL, "the vault is empty and the locale is not Chinese, Japanese or Korean"
