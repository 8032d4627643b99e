"""The foundation commands through the real CLI: init, add, show, list (SPEC §5).

`add` goes through the write policy with the real bundled model; the model loads once per
test process (later loads hit the OS cache), so these tests stay fast.
"""

import json
import re
import subprocess

import pytest
from click.testing import CliRunner

from vaultmem.cli import cli

NOW = "2026-11-29T10:30:00"


def run(*args, vault=None):
    argv = (["--vault", str(vault)] if vault else []) + [str(a) for a in args]
    return CliRunner().invoke(cli, argv)


def git(root, *args):
    return subprocess.run(["git", "-c", "user.name=Alice", "-c", "user.email=alice@example.org",
                           *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def vault(tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", NOW)
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    root = tmp_path / "vault"
    result = run("init", root)
    assert result.exit_code == 0, result.output
    return root


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


NOTE = """\
---
id: 01JDQ80000000000000000TEAX
type: preference
created: 2026-11-20T19:45:00
updated: 2026-11-20T19:45:00
status: active
user: default
tags:
  - vaultmem/preference
---
The user drinks oolong tea.
"""


# --- init -----------------------------------------------------------------------------------

def test_init_on_a_plain_folder_creates_layout_and_a_git_repo(tmp_path):
    root = tmp_path / "fresh"
    result = run("init", root)
    assert result.exit_code == 0, result.output
    assert "Vault ready at" in result.stdout and "created a repository" in result.stdout
    assert (root / ".git").is_dir()
    assert (root / "Memory" / "Preferences").is_dir()
    log = git(root, "log", "--format=%an|%B")
    assert log.startswith("vaultmem|vaultmem: init") and "Vaultmem-Action: init" in log
    assert git(root, "ls-files").splitlines() == ["Memory/.gitattributes", "Memory/Memories.base"]
    assert git(root, "status", "--porcelain") == ""  # .vaultmem/ is ignored, nothing left over


def test_init_on_an_existing_repo_keeps_the_users_work(tmp_path):
    root = tmp_path / "vault"
    write(root / "Daily" / "2026-11-28.md", "Went running.\n")
    git(root, "init", "-q")
    git(root, "add", "Daily/2026-11-28.md")
    git(root, "commit", "-q", "-m", "my notes")
    user_head = git(root, "rev-parse", "HEAD").strip()
    write(root / "Daily" / "2026-11-29.md", "Staged, not committed.\n")
    git(root, "add", "Daily/2026-11-29.md")
    write(root / "Daily" / "2026-11-28.md", "Went running. Edited, unstaged.\n")

    result = run("init", root, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["git"] == "using the existing repository"
    assert git(root, "rev-parse", "HEAD~1").strip() == user_head
    assert git(root, "show", "--name-only", "--format=", "HEAD").splitlines() == [
        "Memory/.gitattributes", "Memory/Memories.base"]
    assert git(root, "diff", "--cached", "--name-only").splitlines() == ["Daily/2026-11-29.md"]
    assert git(root, "diff", "--name-only").splitlines() == ["Daily/2026-11-28.md"]
    assert git(root, "log", "-1", "--format=%an").strip() == "vaultmem"


def test_init_in_a_subfolder_of_a_repo_uses_that_repo(tmp_path):
    git(tmp_path, "init", "-q")
    result = run("init", tmp_path / "notes")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "notes" / ".git").exists()
    assert git(tmp_path, "ls-files").splitlines() == ["notes/Memory/.gitattributes",
                                                      "notes/Memory/Memories.base"]


def test_init_records_memory_notes_already_in_the_vault(tmp_path):
    write(tmp_path / "Memory" / "Preferences" / "Oolong.md", NOTE)
    assert run("init", tmp_path).exit_code == 0
    assert "Memory/Preferences/Oolong.md" in git(tmp_path, "ls-files").splitlines()


def test_init_twice_is_harmless(tmp_path):
    assert run("init", tmp_path).exit_code == 0
    head = git(tmp_path, "rev-parse", "HEAD")
    again = run("init", tmp_path, "--json")
    assert again.exit_code == 0, again.output
    data = json.loads(again.stdout)
    assert data["created"] == [] and data["vault"] == str(tmp_path.resolve())
    assert git(tmp_path, "rev-parse", "HEAD") == head  # nothing changed: no empty commit


def test_init_without_a_path_uses_vault_option_or_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    assert run("init", vault=tmp_path / "named").exit_code == 0
    assert (tmp_path / "named" / ".vaultmem" / "config.toml").is_file()
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert run("init").exit_code == 0
    assert (here / "Memory" / "Inbox").is_dir() and (here / ".git").is_dir()


def test_init_on_a_file_fails_with_a_message(tmp_path):
    (tmp_path / "file.md").write_text("x")
    result = run("init", tmp_path / "file.md")
    assert result.exit_code != 0
    assert "file.md" in result.stderr and result.stdout == ""


# --- show -----------------------------------------------------------------------------------

def test_show_by_title_id_and_path(vault):
    path = write(vault / "Memory" / "Preferences" / "Oolong.md", NOTE)
    for ref in ("Oolong", "01JDQ80000000000000000TEAX", "Memory/Preferences/Oolong.md", str(path)):
        result = run("show", ref, "--json", vault=vault)
        assert result.exit_code == 0, (ref, result.output)
        data = json.loads(result.stdout)
        assert data["path"] == "Memory/Preferences/Oolong.md"
        assert data["text"] == "The user drinks oolong tea."
        assert data["meta"]["created"] == "2026-11-20T19:45:00"
        assert data["problems"] == []
    human = run("show", "Oolong", vault=vault)
    assert human.exit_code == 0
    assert "Oolong  [preference, active]" in human.stdout and "The user drinks oolong tea." in human.stdout


def test_show_chinese_note(vault):
    write(vault / "Memory" / "Preferences" / "喜欢喝乌龙茶.md",
          NOTE.replace("The user drinks oolong tea.", "用户喜欢喝乌龙茶，尤其是冬天。"))
    result = run("show", "喜欢喝乌龙茶", "--json", vault=vault)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["text"] == "用户喜欢喝乌龙茶，尤其是冬天。"


def test_show_unknown_note_says_what_to_do(vault):
    result = run("show", "Nothing like this", vault=vault)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "no note matches 'Nothing like this'" in result.stderr and "vaultmem list" in result.stderr


def test_show_broken_note_reports_path_and_reason_and_leaves_it(vault):
    broken = write(vault / "Memory" / "Facts" / "Broken.md", "---\nid: [oops\n---\nx\n")
    before = broken.read_bytes()
    result = run("show", "Broken", vault=vault)
    assert result.exit_code == 1
    assert "Broken.md" in result.stderr and "invalid YAML frontmatter" in result.stderr
    assert broken.read_bytes() == before


def test_show_another_users_note_is_not_found(vault):
    write(vault / "Memory" / "Preferences" / "Oolong.md", NOTE)
    assert run("show", "Oolong", "--user", "bob", vault=vault).exit_code == 1


# --- list -----------------------------------------------------------------------------------

def test_list_filters_and_reports_broken_notes(vault):
    write(vault / "Memory" / "Preferences" / "Oolong.md", NOTE)
    write(vault / "Memory" / "Facts" / "Bob works nights.md",
          NOTE.replace("type: preference", "type: fact").replace("user: default", "user: bob")
          .replace("TEAX", "BOBX"))
    write(vault / "Memory" / "Facts" / "Broken.md", "\xff not yaml")
    (vault / "Memory" / "Facts" / "Broken.md").write_bytes(b"---\nid: caf\xe9\n---\n")
    write(vault / "Projects" / "Mine.md", "The user's own note.\n")

    result = run("list", "--json", vault=vault)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert sorted(n["title"] for n in data["notes"]) == ["Bob works nights", "Oolong"]
    assert data["errors"] == [{"path": "Memory/Facts/Broken.md",
                               "reason": "not UTF-8 (byte 11); re-save the file as UTF-8"}]

    by_type = json.loads(run("list", "--type", "fact", "--json", vault=vault).stdout)
    assert [n["title"] for n in by_type["notes"]] == ["Bob works nights"]
    by_user = json.loads(run("list", "--user", "default", "--json", vault=vault).stdout)
    assert [n["title"] for n in by_user["notes"]] == ["Oolong"]

    human = run("list", vault=vault)
    assert human.exit_code == 0
    assert "2 notes" in human.stdout
    assert "skipped Memory/Facts/Broken.md: not UTF-8" in human.stderr


def test_list_and_show_a_note_that_is_a_symlink(vault, tmp_path):
    target = write(tmp_path / "shared" / "Oolong.md", NOTE)
    (vault / "Memory" / "Preferences" / "Oolong.md").symlink_to(target)
    listed = run("list", "--json", vault=vault)
    assert listed.exit_code == 0, listed.output
    assert [n["path"] for n in json.loads(listed.stdout)["notes"]] == ["Memory/Preferences/Oolong.md"]
    shown = run("show", "Memory/Preferences/Oolong.md", "--json", vault=vault)
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["title"] == "Oolong"


def test_list_without_a_vault_says_how_to_name_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    result = run("list")
    assert result.exit_code == 1
    assert "--vault" in result.stderr and "vaultmem init" in result.stderr


def test_a_broken_config_stops_every_command_with_a_fix(vault):
    (vault / ".vaultmem" / "config.toml").write_text("[search]\nmin_score = 'high'\n")
    for args in (["list"], ["show", "anything"]):
        result = run(*args, vault=vault)
        assert result.exit_code == 1 and result.stdout == ""
        assert "config.toml line 2: [search] min_score must be a number" in result.stderr


def test_list_takes_the_vault_from_the_environment(vault, monkeypatch, tmp_path):
    write(vault / "Memory" / "Preferences" / "Oolong.md", NOTE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VAULTMEM_VAULT", str(vault))
    result = run("list", "--json")
    assert result.exit_code == 0, result.output
    assert [n["title"] for n in json.loads(result.stdout)["notes"]] == ["Oolong"]


def test_list_finds_the_vault_upward_from_the_current_folder(vault, monkeypatch):
    write(vault / "Memory" / "Preferences" / "Oolong.md", NOTE)
    monkeypatch.chdir(vault / "Memory" / "Facts")
    result = run("list", "--json")
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["notes"]) == 1


# --- add ------------------------------------------------------------------------------------

DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
QUOTED_LINK = re.compile(r'^"\[\[[^"\[\]]+\]\]"$')


def obsidian_property_problems(raw: str) -> list[str]:
    """Read a note's raw frontmatter the way Obsidian's Properties view needs it (SPEC §3):
    block-style lists, links quoted, dates YYYY-MM-DD, date-times YYYY-MM-DDTHH:mm:ss unquoted
    and without offset, tags without '#' or spaces, the required keys present."""
    lines = raw.split("\n")
    if lines[0] != "---" or "---" not in lines[1:]:
        return ["no frontmatter fenced by '---' lines"]
    problems, props, key = [], {}, None
    for line in lines[1:lines.index("---", 1)]:
        if line.startswith(("  - ", "- ")) and key:
            props[key].append(line.split("- ", 1)[1])
        elif re.match(r"^[A-Za-z_][\w-]*:( |$)", line):
            key, value = line.split(":", 1)
            value = value.strip()
            props[key] = [] if value == "" else value
            if value.startswith(("[", "{")):
                problems.append(f"{key}: flow-style value {value!r}")
        else:
            problems.append(f"unexpected frontmatter line {line!r}")
    for key in ("id", "type", "created", "updated", "status", "user"):
        if not props.get(key):
            problems.append(f"missing {key}")
    for key in ("created", "updated"):
        if key in props and not DATE_TIME.match(str(props[key])):
            problems.append(f"{key}: {props[key]!r} is not YYYY-MM-DDTHH:mm:ss")
    for key in ("valid_from", "valid_to"):
        if key in props and not DATE.match(str(props[key])):
            problems.append(f"{key}: {props[key]!r} is not YYYY-MM-DD")
    for key, value in props.items():
        items = value if isinstance(value, list) else [value]
        if any("[[" in item for item in items):
            problems += [f"{key}: link {item!r} not quoted" for item in items if not QUOTED_LINK.match(item)]
    for key in ("tags", "aliases", "entities", "sources", "source_messages"):
        if key in props and not isinstance(props[key], list):
            problems.append(f"{key}: not a block list")
    for tag in props.get("tags", []):
        if not re.match(r"^[^\s#,\"']+$", tag):
            problems.append(f"tag {tag!r} has '#', spaces, commas or quotes")
    return problems


def test_the_property_checker_catches_what_obsidian_rejects():
    bad = ('---\nid: A\ntype: fact\ncreated: "2026-11-29 10:30:00"\nupdated: 2026-11-29T10:30:00+01:00\n'
           'status: active\nuser: default\ntags: [a, b]\nentities:\n  - [[Coffee]]\nvalid_from: 29/11/2026\n'
           '---\nx\n')
    problems = obsidian_property_problems(bad)
    for expected in ("created:", "updated:", "tags: flow-style", "entities: link", "valid_from:"):
        assert any(p.startswith(expected) for p in problems), (expected, problems)
    good = NOTE.replace("tags:", "valid_from: 2026-11-20\nentities:\n  - \"[[Tea]]\"\ntags:")
    assert obsidian_property_problems(good) == []


@pytest.mark.parametrize("text,note_type", [
    ("The user prefers jasmine tea in the afternoon and visits Lisbon every spring", "preference"),
    ("用户每周六早上去公园跑步，大约跑五公里。", "event"),
])
def test_add_writes_a_note_obsidian_reads_as_properties(vault, text, note_type):
    result = run("add", text, "--type", note_type, "--tag", "#health", "--tag", "two words",
                 "--importance", "0.7", "--json", vault=vault)
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert set(decision) == {"action", "id", "path", "reason", "nearest"}
    assert decision["action"] == "created" and decision["nearest"] == []   # nothing held yet
    path = vault / decision["path"]
    assert path.parent.name == {"preference": "Preferences", "event": "Events"}[note_type]
    raw = path.read_text(encoding="utf-8")
    assert obsidian_property_problems(raw) == []
    assert f"id: {decision['id']}\n" in raw and f"type: {note_type}\n" in raw
    assert f"created: {NOW}\n" in raw and "importance: 0.7\n" in raw
    assert "  - health\n" in raw and "  - two-words\n" in raw
    assert raw.split("---\n", 2)[2].strip() == text.strip()
    shown = json.loads(run("show", decision["id"], "--json", vault=vault).stdout)
    assert shown["problems"] == [] and shown["path"] == decision["path"]


def test_add_is_committed_to_git(vault):
    result = run("add", "The user keeps a sourdough starter named Clint", "--json", vault=vault)
    assert result.exit_code == 0, result.output
    rel = json.loads(result.stdout)["path"]
    assert git(vault, "log", "-1", "--format=%s").startswith("vaultmem: add fact")
    assert git(vault, "show", "--name-only", "--format=", "HEAD").splitlines() == [rel]
    assert git(vault, "status", "--porcelain") == ""


@pytest.mark.parametrize("title", ["Tea: a #history of [[links]] 50%% ^x | y", "../../outside/a\\b"])
def test_add_with_an_unsafe_title_writes_a_safe_file_inside_the_type_folder(vault, title):
    result = run("add", "The user collects old maps of Lisbon and Porto", "--title", title,
                 "--json", vault=vault)
    assert result.exit_code == 0, result.output
    path = (vault / json.loads(result.stdout)["path"]).resolve()
    assert path.parent == (vault / "Memory" / "Facts").resolve()
    assert not re.search(r"[#|^:%\[\]/\\]", path.stem) and not path.stem.startswith(".")
    assert path.is_file()
    assert sorted(p.name for p in vault.iterdir() if not p.name.startswith(".")) == ["Memory"]


def test_add_for_another_user_lands_in_that_namespace(vault):
    result = run("add", "Bob works night shifts at the hospital", "--user", "bob", "--json", vault=vault)
    assert result.exit_code == 0, result.output
    path = vault / json.loads(result.stdout)["path"]
    assert "user: bob\n" in path.read_text(encoding="utf-8")
    listed = json.loads(run("list", "--user", "bob", "--json", vault=vault).stdout)["notes"]
    assert [n["path"] for n in listed] == [json.loads(result.stdout)["path"]]
    assert json.loads(run("list", "--user", "default", "--json", vault=vault).stdout)["notes"] == []


def test_add_rejects_noise_without_writing(vault):
    result = run("add", "ok thanks", "--json", vault=vault)
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["action"] == "rejected" and decision["path"] is None and decision["reason"]
    assert list((vault / "Memory").rglob("*.md")) == []


@pytest.mark.parametrize("args,message", [
    (["--type", "opinion"], "'opinion' is not one of"),
    (["--importance", "1.5"], "1.5 is not in the range"),
])
def test_add_rejects_bad_options_on_stderr(vault, args, message):
    result = run("add", "The user likes tea", *args, vault=vault)
    assert result.exit_code == 2
    assert message in result.stderr and result.stdout == ""
