"""Put an `[llm]` table in place of the one `vaultmem init` wrote, as a person edits
config.toml (memquality.py --llm-config, locomo.py --rerank-llm), and the relay's table when
a harness runs through the file relay (`--record` / `--replay`, llm_relay.py).

`{case}` in the table's `base_url` becomes the conversation's tag, so that each conversation
reaches the relay under its own name (SPEC §6)."""

from __future__ import annotations

import re
from pathlib import Path

RELAY_TIMEOUT = 6 * 3600   # recording: a call waits for its wave's reader
REPLAY_TIMEOUT = 60


def relay_table(relay) -> str:
    """The `[llm]` table that points a vault at `relay` (an `llm_relay.Relay`)."""
    timeout = REPLAY_TIMEOUT if relay.replay else RELAY_TIMEOUT
    return (f'[llm]\nbase_url = "{relay.base_url("{case}")}"\nmodel = "relay"\n'
            f'api_key_env = ""\ntimeout = {timeout}\n')


def put_llm_table(vault: Path, toml: Path | str, case: str | None = None) -> None:
    """Replace the `[llm]` table of `vault`'s config.toml with the one `toml` holds (a file,
    or the table's text), `{case}` in it replaced by `case`."""
    config = vault / ".vaultmem" / "config.toml"
    table = (toml.read_text(encoding="utf-8") if isinstance(toml, Path) else toml).strip() + "\n\n"
    if "{case}" in table:
        if not case or not re.fullmatch(r"[A-Za-z0-9._-]+", case):
            raise SystemExit(f"{{case}} in the [llm] table needs a tag of letters, digits, '.', '_' "
                             f"or '-', not {case!r}")
        table = table.replace("{case}", case)
    text, found = re.subn(r"(?m)^\[llm\]\n(?:(?!\[).*\n)*", lambda _m: table,
                          config.read_text(encoding="utf-8"))
    if not found or not table.startswith("[llm]"):
        raise SystemExit(f"{toml if isinstance(toml, Path) else 'the table'} must hold just an [llm] "
                         f"table, and {config} have one")
    config.write_text(text, encoding="utf-8")
