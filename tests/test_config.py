"""vaultmem/config.py: `.vaultmem/config.toml` read once into a frozen Config."""

import dataclasses

import pytest

from vaultmem.config import DEFAULT_CONFIG_TOML, Config, config_path, load_config
from vaultmem.errors import ConfigError


def write_config(root, text):
    path = config_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_config_file_means_the_defaults(tmp_path):
    assert load_config(tmp_path) == Config()


def test_the_shipped_config_file_says_exactly_the_defaults(tmp_path):
    write_config(tmp_path, DEFAULT_CONFIG_TOML)
    config = load_config(tmp_path)
    assert config == Config()
    assert config.extra == {}  # every key in the template is a known one


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


def test_unknown_keys_are_kept_aside_not_rejected(tmp_path):
    write_config(tmp_path, 'future_option = 1\n[search]\nnew_knob = "x"\n[plugins]\nname = "y"\n')
    config = load_config(tmp_path)
    assert config.extra == {"future_option": 1, "search.new_knob": "x", "plugins": {"name": "y"}}
    assert config == Config()  # extra does not take part in equality


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
