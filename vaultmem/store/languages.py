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
# In `.vaultmem/`: init picked the model for an empty vault (from the locale alone), so the
# first transcripts may still choose (`model_for_transcripts`); removed once they have.
PICKED_FOR_EMPTY = "model-picked-for-empty-vault"
EMPTY_VAULT = "the vault is empty"   # how `pick_model` says it had only the locale to go by
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
        return MULTILINGUAL_MODEL, f"{EMPTY_VAULT} and the locale is {locale}"
    return DEFAULT_MODEL, f"{EMPTY_VAULT} and the locale is not Chinese, Japanese or Korean"


def model_for_transcripts(texts, current: str) -> tuple[str, str] | None:
    """(model, why) when the first transcripts of a vault whose model was picked while it was
    empty are in Chinese, Japanese or Korean (or mix them with English) and `current` reads
    English only: their memories are written in that language, and questions asked in
    English would not find them. None: keep `current`.

    >>> model_for_transcripts(["明天 3pm 跟 HR 有个 call, remind me 要准备 visa 的文件"], DEFAULT_MODEL)[0]
    'use-multilingual-v3'
    """
    from vaultmem.store.config import MULTILINGUAL_MODELS

    if current in MULTILINGUAL_MODELS:
        return None
    sample = "\n".join(texts)
    share = cjk_share(sample)
    if share < CJK_VAULT_SHARE:
        return None
    return MULTILINGUAL_MODEL, (f"{share:.0%} of the first transcripts' messages are Chinese, Japanese or "
                                f"Korean, and {current} reads English only")


def model_unsettled(vault) -> bool:
    """Whether `init` picked the vault's model while it was empty and no transcript has
    chosen since (`settle_model`)."""
    return (vault.state_dir / PICKED_FOR_EMPTY).exists()


def settle_model(vault, texts) -> dict | None:
    """Let the first transcripts' messages (`texts`) choose the model of a vault `init` picked
    one for while it was empty: `{"model", "why"}` when config.toml now names the multilingual
    model (`model_for_transcripts`), else None. Decided once: the marker goes either way, and
    a vault that holds memories already (written by `add` or MCP meanwhile) keeps its model."""
    from vaultmem.store.config import config_path
    from vaultmem.store.files import atomic_write
    from vaultmem.store.config import with_model

    (vault.state_dir / PICKED_FOR_EMPTY).unlink(missing_ok=True)
    if any(p.parent != vault.memory_dir for p in vault.memory_dir.rglob("*.md")):
        return None
    fit = model_for_transcripts(texts, vault.config.model)
    if fit is None:
        return None
    config = config_path(vault.root)
    atomic_write(config, with_model(config.read_text(encoding="utf-8"), fit[0]))
    return {"model": fit[0], "why": fit[1]}
