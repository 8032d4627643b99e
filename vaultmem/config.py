"""Configuration: a frozen dataclass read once from `.vaultmem/config.toml` and passed in."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from vaultmem.errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"

DEFAULT_CONFIG_TOML = """\
# vaultmem settings for this vault. Delete a line to get its default back.

# Folder (inside the vault) that holds the memory notes.
memory_root = "Memory"
# Namespace written and read when no --user is given.
user = "default"
# Return memories of user "shared" to every user.
share_shared = false

[embedding]
# A sentence-transformers model name or a local folder. The default ships with vaultmem.
model = "all-MiniLM-L6-v2"
# CPU threads for embedding (0 = half the cores, leaving the rest to Obsidian and the
# agent; on a busy 2-core machine two threads spin against each other and run slower).
threads = 0

[search]
# Hits scoring below this are dropped ("No relevant memories.").
min_score = 0.25

[policy]
# Cosine similarity at or above which a new memory updates an existing one.
dedup_threshold = 0.92

[llm]
# An OpenAI-compatible chat completions endpoint, used by `extract --llm`.
base_url = "http://127.0.0.1:11434/v1"
model = "llama3.1"
# Name of the environment variable holding the API key (empty for local servers).
api_key_env = "VAULTMEM_LLM_API_KEY"
timeout = 60

[gc]
# Archive memories below this importance that were not accessed for archive_after_days.
archive_below_importance = 0.5
archive_after_days = 30
# Memories not accessed for this long are ranked lower.
stale_after_days = 180
# Run gc from the daemon every N hours (0 = never).
schedule_hours = 0

[daemon]
# Quiet time before a burst of file events is indexed, and the longest wait.
debounce_ms = 200
max_wait_ms = 1000
# Commit the user's edits to memory notes after they are quiet this long.
commit_quiet_seconds = 5
# Folder (inside memory_root) that agents drop transcripts into.
inbox = "Inbox"
# Re-export agent memory files when memories change ("" = off; e.g. "claude").
export_on_change = ""
"""


@dataclass(frozen=True)
class Config:
    memory_root: str = "Memory"
    user: str = "default"
    share_shared: bool = False
    model: str = DEFAULT_MODEL
    embed_threads: int = 0
    min_score: float = 0.25
    dedup_threshold: float = 0.92
    llm_base_url: str = "http://127.0.0.1:11434/v1"
    llm_model: str = "llama3.1"
    llm_api_key_env: str = "VAULTMEM_LLM_API_KEY"
    llm_timeout: float = 60.0
    gc_archive_below_importance: float = 0.5
    gc_archive_after_days: int = 30
    gc_stale_after_days: int = 180
    gc_schedule_hours: float = 0.0
    debounce_ms: int = 200
    max_wait_ms: int = 1000
    commit_quiet_seconds: float = 5.0
    inbox: str = "Inbox"
    export_on_change: str = ""
    obsidian_dir: str = ".obsidian"
    extra: dict = field(default_factory=dict, compare=False)


# TOML section/key -> Config field, for the keys that live in a table.
_SECTIONS = {
    "embedding": {"model": "model", "threads": "embed_threads"},
    "search": {"min_score": "min_score"},
    "policy": {"dedup_threshold": "dedup_threshold"},
    "llm": {"base_url": "llm_base_url", "model": "llm_model", "api_key_env": "llm_api_key_env",
            "timeout": "llm_timeout"},
    "gc": {"archive_below_importance": "gc_archive_below_importance",
           "archive_after_days": "gc_archive_after_days",
           "stale_after_days": "gc_stale_after_days", "schedule_hours": "gc_schedule_hours"},
    "daemon": {"debounce_ms": "debounce_ms", "max_wait_ms": "max_wait_ms",
               "commit_quiet_seconds": "commit_quiet_seconds", "inbox": "inbox",
               "export_on_change": "export_on_change"},
}


def config_path(vault_root: Path) -> Path:
    return Path(vault_root) / ".vaultmem" / "config.toml"


def load_config(vault_root: Path) -> Config:
    """Read `.vaultmem/config.toml` (defaults when absent); raise ConfigError on bad values."""
    path = config_path(vault_root)
    values: dict = {"obsidian_dir": _obsidian_dir(Path(vault_root))}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc} — fix the file or delete it to use the defaults")
        extra = {}
        for key, value in data.items():
            if key in _SECTIONS and isinstance(value, dict):
                for sub, sub_value in value.items():
                    target = _SECTIONS[key].get(sub)
                    if target is None:
                        extra[f"{key}.{sub}"] = sub_value
                    else:
                        values[target] = sub_value
            elif key in {"memory_root", "user", "share_shared"}:
                values[key] = value
            else:
                extra[key] = value
        values["extra"] = extra
    return _build(path, values)


def _build(path: Path, values: dict) -> Config:
    fields = {f.name: f for f in dataclasses.fields(Config)}
    for name, value in values.items():
        default = fields[name].default
        if name == "extra" or default is dataclasses.MISSING:
            continue
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            value = float(value) if ok else value
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, str)
        if not ok:
            raise ConfigError(f"{path}: {_toml_key(name)} must be {_KINDS[type(default)]}, got {value!r}")
        values[name] = value
    root = values.get("memory_root", "Memory")
    # "." would make every note of the user's a memory; a dot-folder is ignored by the
    # scanner (and hidden in Obsidian), so its memories would never be found.
    if not _is_plain_subfolder(root):
        raise ConfigError(f"{path}: memory_root must be a folder inside the vault (not '.', not a "
                          f"dot-folder, no '..'), got {root!r} — e.g. memory_root = \"Memory\"")
    inbox = values.get("inbox", "Inbox")
    if not _is_plain_subfolder(inbox):
        raise ConfigError(f"{path}: [daemon] inbox must be a folder inside memory_root, got {inbox!r} "
                          "— e.g. inbox = \"Inbox\"")
    for name in _FRACTIONS:
        if name in values and not 0 <= values[name] <= 1:
            raise ConfigError(f"{path}: {_toml_key(name)} must be between 0 and 1, got {values[name]!r}")
    for name in _NON_NEGATIVE:
        if name in values and values[name] < 0:
            raise ConfigError(f"{path}: {_toml_key(name)} must be 0 or more, got {values[name]!r}")
    return Config(**values)


_FRACTIONS = ("min_score", "dedup_threshold", "gc_archive_below_importance")
_NON_NEGATIVE = ("llm_timeout", "gc_archive_after_days", "gc_stale_after_days", "gc_schedule_hours",
                 "debounce_ms", "max_wait_ms", "commit_quiet_seconds")


_KINDS = {bool: "true or false", int: "a whole number", float: "a number", str: "a quoted string"}


def _toml_key(field_name: str) -> str:
    """A Config field as the user writes it in the file: `[llm] base_url`, `user`."""
    for section, keys in _SECTIONS.items():
        for key, target in keys.items():
            if target == field_name:
                return f"[{section}] {key}"
    return field_name


def _is_plain_subfolder(folder: str) -> bool:
    parts = Path(folder).parts
    return bool(parts) and not Path(folder).is_absolute() and \
        not any(p in (".", "..") or p.startswith(".") for p in parts)


def _obsidian_dir(vault_root: Path) -> str:
    """Obsidian's config folder: `.obsidian` unless the vault only has another dot-folder
    with Obsidian's app.json (Obsidian lets users rename it)."""
    if (vault_root / ".obsidian").is_dir():
        return ".obsidian"
    try:
        for child in vault_root.iterdir():
            if child.name.startswith(".") and (child / "app.json").is_file():
                return child.name
    except OSError:
        pass
    return ".obsidian"
