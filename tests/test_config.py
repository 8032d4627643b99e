"""vaultmem/store/config.py: `.vaultmem/config.toml` read once into a frozen Config."""

import dataclasses

import pytest

from vaultmem.errors import ConfigError
from vaultmem.store.config import DEFAULT_CONFIG_TOML, Config, config_path, load_config


def write_config(root, text):
    path = config_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_config_file_means_the_defaults(tmp_path):
    assert load_config(tmp_path) == Config()


def test_the_shipped_config_file_says_exactly_the_defaults(tmp_path):
    write_config(tmp_path, DEFAULT_CONFIG_TOML)
    assert load_config(tmp_path) == Config()


def test_values_from_every_section_are_read(tmp_path):
    write_config(tmp_path, """
memory_root = "Agent Memory"
user = "alice"
share_shared = true
[embedding]
model = "/models/minilm"
[search]
min_score = 0.4
[policy]
dedup_threshold = 1
[llm]
base_url = "http://127.0.0.1:8080/v1"
timeout = 5
[gc]
archive_after_days = 7
[daemon]
debounce_ms = 50
inbox = "Drop"
""")
    config = load_config(tmp_path)
    assert (config.memory_root, config.user, config.share_shared) == ("Agent Memory", "alice", True)
    assert config.model == "/models/minilm"
    assert config.min_score == 0.4
    assert config.dedup_threshold == 1.0 and isinstance(config.dedup_threshold, float)
    assert config.llm_base_url == "http://127.0.0.1:8080/v1" and config.llm_timeout == 5.0
    assert config.gc_archive_after_days == 7
    assert (config.debounce_ms, config.inbox) == (50, "Drop")
    assert config.max_wait_ms == Config().max_wait_ms


def test_config_is_frozen(tmp_path):
    config = load_config(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.user = "mallory"


@pytest.mark.parametrize("text,match", [
    ("memory_root = \n", "config.toml"),
    ("user = 'a'\nuser = 'b'\n", "config.toml"),
    ('memory_root = 5\n', "memory_root must be a quoted string"),
    ('share_shared = "yes"\n', "share_shared must be true or false"),
    ('[daemon]\ndebounce_ms = 1.5\n', r"\[daemon\] debounce_ms must be a whole number"),
    ('[daemon]\ndebounce_ms = true\n', r"\[daemon\] debounce_ms must be a whole number"),
    ('[search]\nmin_score = "high"\n', r"\[search\] min_score must be a number"),
    ('[search]\nmin_score = 1.5\n', r"\[search\] min_score must be between 0 and 1"),
    ('[policy]\ndedup_threshold = -0.1\n', "between 0 and 1"),
    ('[daemon]\nmax_wait_ms = -1\n', r"\[daemon\] max_wait_ms must be 0 or more"),
    ('memory_root = "/abs/Memory"\n', "inside the vault"),
    ('memory_root = "../Memory"\n', "inside the vault"),
    ('memory_root = "."\n', "inside the vault"),
    ('memory_root = ""\n', "inside the vault"),
    ('memory_root = ".memory"\n', "dot-folder"),
    ('[daemon]\ninbox = "../Inbox"\n', "inbox must be a folder inside memory_root"),
    ('[mcp]\nhttp = "127.0.0.1:99999"\n', r"\[mcp\] http must be HOST:PORT"),
    ('[mcp]\nhttp = "my host:8765"\n', r"\[mcp\] http must be HOST:PORT"),
])
def test_bad_config_names_the_file_and_the_problem(tmp_path, text, match):
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError, match=match) as caught:
        load_config(tmp_path)
    assert str(path) in str(caught.value)


def test_non_utf8_config_is_a_config_error(tmp_path):
    path = config_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes('user = "café"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match="delete it to use the defaults"):
        load_config(tmp_path)


def test_the_mcp_http_address_is_off_by_default_and_read_as_given(tmp_path):
    assert load_config(tmp_path).mcp_http == ""
    write_config(tmp_path, '[mcp]\nhttp = "[::1]:9000"\n')
    assert load_config(tmp_path).mcp_http == "[::1]:9000"


def test_a_nested_memory_root_is_allowed(tmp_path):
    write_config(tmp_path, 'memory_root = "Agents/Memory"\n')
    assert load_config(tmp_path).memory_root == "Agents/Memory"


def test_obsidian_config_folder_is_read_from_the_vault(tmp_path):
    assert load_config(tmp_path).obsidian_dir == ".obsidian"
    (tmp_path / ".obsidian-phone").mkdir()
    (tmp_path / ".obsidian-phone" / "app.json").write_text("{}")
    assert load_config(tmp_path).obsidian_dir == ".obsidian-phone"
    (tmp_path / ".obsidian").mkdir()
    assert load_config(tmp_path).obsidian_dir == ".obsidian"


# --- strict reading: typos and wrong types name the file, the line and the nearest key ------

@pytest.mark.parametrize("text,line,message", [
    ("user = 'a'\n\n[daemon]\ninbox = 'Drop'\ndebounce = 50\n", 5,
     "unknown setting [daemon] debounce — did you mean debounce_ms?"),
    ("[search]\nmin_scor = 0.9\n", 2, "unknown setting [search] min_scor — did you mean min_score?"),
    ("# mine\nmemory_rot = 'Memory'\n", 2, "unknown setting memory_rot — did you mean memory_root?"),
    # The right name in the wrong table points at the table it belongs to.
    ("[daemon]\nschedule_hours = 6\n", 2, "unknown setting [daemon] schedule_hours — did you mean "
                                          "[gc] schedule_hours?"),
    ("min_score = 0.3\n", 1, "unknown setting min_score — did you mean [search] min_score?"),
    ("[serch]\nmin_score = 0.3\n", 1, "unknown section [serch] — did you mean [search]?"),
    ("[plugins]\nname = 'y'\n", 1, "unknown section [plugins]"),
    ("[daemon]\nmax_note_bytes = 10\n", 2, "unknown setting [daemon] max_note_bytes"),
    # Dotted keys and inline tables are the same settings written another way.
    ("daemon.debounce = 50\n", 1, "unknown setting [daemon] debounce — did you mean debounce_ms?"),
    ("user = 'a'\ndaemon = { debounce = 50 }\n", 2, "unknown setting [daemon] debounce"),
    ("search = 0.3\n", 1, "search must be a table of settings"),
    ('[search]\n\n# how picky\nmin_score = "high"\n', 4, "[search] min_score must be a number, got 'high'"),
    ("[daemon]\ndebounce_ms = 1.5\n", 2, "[daemon] debounce_ms must be a whole number, got 1.5"),
    ("[daemon]\nexport_on_change = true\n", 2, "[daemon] export_on_change must be a quoted string"),
    ("share_shared = 1\n", 1, "share_shared must be true or false, got 1"),
    ("[gc]\nschedule_hours = -2\n", 2, "[gc] schedule_hours must be 0 or more, got -2"),
])
def test_a_typo_or_a_wrong_type_names_the_file_the_line_and_the_fix(tmp_path, text, line, message):
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value).startswith(f"{path} line {line}: ")
    assert message in str(caught.value)


def test_every_key_of_the_default_file_is_read_back_into_its_field(tmp_path):
    """Each line of the shipped file, changed to another valid value, changes exactly the
    field it names: no key of the template is dead, and no field is missing from it."""
    import tomllib

    from vaultmem.store.config import default_config_toml

    assert DEFAULT_CONFIG_TOML == default_config_toml()
    template = tomllib.loads(DEFAULT_CONFIG_TOML)
    keys = [(None, k) for k, v in template.items() if not isinstance(v, dict)]
    keys += [(s, k) for s, table in template.items() if isinstance(table, dict) for k in table]
    fields = [f for f in dataclasses.fields(Config) if "key" in f.metadata]  # not read from the vault
    assert len(keys) == len(fields)
    changed = set()
    for section, key in keys:
        default = (template[section] if section else template)[key]
        other = {bool: lambda v: not v, int: lambda v: v + 3, float: lambda v: v / 2 + 0.01,
                 str: lambda v: "Elsewhere", list: lambda v: v + ["Elsewhere/**"]}[type(default)](default)
        if isinstance(default, int) and not isinstance(default, bool) and key.endswith(("_seconds", "hours", "timeout")):
            other = default + 3  # written as a whole number, read as float
        if key == "runtime":  # one of two choices, not free text
            other = "torch" if default == "onnx" else "onnx"
        if key == "extractor":
            other = "rules" if default == "model" else "model"
        if key == "rerank":
            other = "llm" if default == "" else ""
        data = {k: dict(v) if isinstance(v, dict) else v for k, v in template.items()}
        (data[section] if section else data)[key] = other
        write_config(tmp_path, _dump(data))
        config = load_config(tmp_path)
        diff = [f.name for f in fields if getattr(config, f.name) != getattr(Config(), f.name)]
        assert len(diff) == 1, (section, key, diff)
        assert getattr(config, diff[0]) == (tuple(other) if isinstance(other, list) else other)
        changed.add(diff[0])
    assert changed == {f.name for f in fields}


def _dump(data: dict) -> str:
    def value(v):
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return ("true" if v else "false") if isinstance(v, bool) else f'"{v}"' if isinstance(v, str) else repr(v)

    lines = [f"{k} = {value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for section, table in data.items():
        if isinstance(table, dict):
            lines += [f"[{section}]"] + [f"{k} = {value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def test_every_setting_the_code_reads_is_a_config_field():
    """An AST scan of the package: `<...>.config.X`, `cfg.X` (for names bound to a Config)
    and `getattr(config, "X", ...)` must name Config fields, so no setting is read
    that the file cannot set (as `inbox_settle_seconds` and `max_note_bytes` once were)."""
    import ast
    from pathlib import Path

    import vaultmem

    fields = {f.name for f in dataclasses.fields(Config)}
    reads: dict[str, list[str]] = {}

    def is_config(node, names) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "config") or \
            (isinstance(node, ast.Name) and node.id in names)

    package = Path(vaultmem.__file__).parent
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set()
        for node in ast.walk(tree):  # names bound to a Config: `cfg = vault.config`, `config: Config`
            if isinstance(node, ast.Assign) and (is_config(node.value, set()) or (
                    isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "load_config")):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.arg) and "Config" in ast.unparse(node.annotation or ast.Constant("")):
                names.add(node.arg)
        for node in ast.walk(tree):
            attr = None
            if isinstance(node, ast.Attribute) and is_config(node.value, names):
                attr = node.attr
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("getattr", "hasattr")
                  and len(node.args) >= 2 and is_config(node.args[0], names)
                  and isinstance(node.args[1], ast.Constant)):
                attr = node.args[1].value
            if attr is not None:
                reads.setdefault(attr, []).append(f"{path.relative_to(package)}:{node.lineno}")
    unknown = {attr: where for attr, where in reads.items() if attr not in fields}
    assert not unknown, f"settings read but not in Config: {unknown}"
    # The scan sees the reads it exists for (it is not vacuously green).
    assert {"debounce_ms", "max_wait_ms", "inbox_settle_seconds", "commit_quiet_seconds",
            "export_on_change", "gc_schedule_hours", "export_out", "memory_root"} <= set(reads)
