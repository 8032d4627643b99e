"""Put a file's `[llm]` table in place of the one `vaultmem init` wrote, as a person edits
config.toml (memquality.py --llm-config, locomo.py --rerank-llm)."""

from __future__ import annotations

import re
from pathlib import Path


def put_llm_table(vault: Path, toml: Path) -> None:
    """Replace the `[llm]` table of `vault`'s config.toml with the one `toml` holds."""
    config = vault / ".vaultmem" / "config.toml"
    table = toml.read_text(encoding="utf-8").strip() + "\n\n"
    text, found = re.subn(r"(?m)^\[llm\]\n(?:(?!\[).*\n)*", lambda _m: table,
                          config.read_text(encoding="utf-8"))
    if not found or not table.startswith("[llm]"):
        raise SystemExit(f"{toml} must hold just an [llm] table, and {config} have one")
    config.write_text(text, encoding="utf-8")
