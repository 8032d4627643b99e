"""The person's own notes: read-only reference beside the memories (issue 18).

Chunking of notes as people write them, which notes are in scope, and end to end on real
files with the real model: init + reindex leave every user file byte-identical and create
no folder among them, search and context take a scope, nothing of the person's is ever
committed or changed, and the daemon picks up a hand edit to a note.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultmem import api
from vaultmem.errors import ConfigError, NoteNotFound
from vaultmem.index.user_notes import chunk_user_note, read_user_note
from vaultmem.store.config import load_config
from vaultmem.store.vault import Vault

VAULTMEM = str(Path(sys.executable).with_name("vaultmem"))
TEA = """---
aliases: [Brew guide, 泡茶]
tags: [drinks]
---
# Tea

Green tea, no sugar. #daily

## Brewing
> [!tip] Water temperature
> Use 80°C water for **green** tea, see [[Water|water notes]].

- step one ![[kettle.png|100]]
- step two [[Timer#Minutes]]

| Tea | Temp |
|-----|------|
| Green | 80 \\| 85 |

```python
brew(tea="green")
```

Inline `code [[NotALink]]` here. %% hidden remark %% done ^para1

## 中文
我每天早上喝绿茶，不加糖。周末会喝普洱。
"""


def chunks_of(text: str, rel: str = "Food/Tea.md"):
    return chunk_user_note(text.encode("utf-8"), rel, mtime=0)


# --- chunking ---------------------------------------------------------------------------

def test_a_note_is_cut_by_heading_and_links_to_its_heading():
    chunks = chunks_of(TEA)
    assert [c.sources for c in chunks] == [["[[Tea]]"], ["[[Tea#Brewing]]"], ["[[Tea#中文]]"]]
    assert {c.type for c in chunks} == {"note"} and {c.note_id for c in chunks} == {"Food/Tea.md"}
    # The title (with its aliases) and heading path are embedded; tags and folder are keywords.
    assert chunks[1].search_text.startswith("Tea (Brew guide, 泡茶) › Brewing\n")
    assert chunks[2].search_text.startswith("Tea (Brew guide, 泡茶) › 中文\n")
    assert "Food" in chunks[0].keywords and "drinks" in chunks[0].keywords
    assert chunks[0].tags == "|drinks|daily|"


def test_a_hit_shows_readable_text():
    brewing = chunks_of(TEA)[1].text
    assert "Tip: Water temperature" in brewing          # a callout, not "> [!tip]"
    assert "Use 80°C water for green tea, see water notes." in brewing   # links by label, no **
    assert "kettle.png" not in brewing and "100" not in brewing          # an image embed says nothing
    assert "step two Timer › Minutes" in brewing
    assert "Green · 80 | 85" in brewing and "---" not in brewing         # a table row, `\|` a pipe
    assert 'brew(tea="green")' in brewing and "```" not in brewing       # code without fences
    assert "code [[NotALink]]" in brewing                                # code spans as written
    assert "hidden remark" not in brewing and "^para1" not in brewing    # comments and block ids


def test_a_block_with_an_id_links_to_the_block():
    chunks = chunks_of("# Plan\n\n" + ("Long paragraph about the plan. " * 15) + "^plan1\n\n"
                       + "Another paragraph that is long enough. " * 25 + "\n", "Work/Plan.md")
    assert chunks[0].sources == ["[[Plan#^plan1]]"]
    assert chunks[1].sources == ["[[Plan]]"]
    # A `^id` on its own line names the block before it (lists, tables, quotes).
    listed = chunks_of("## Steps\n\n- one\n- two\n\n^steps\n")
    assert listed[0].sources == ["[[Tea#^steps]]"] and "steps" not in listed[0].text


def test_long_sections_are_cut_at_sentences_in_chinese_too():
    long_zh = "# 旅行\n\n" + "我们在成都吃了火锅，然后去了宽窄巷子。" * 40 + "\n"
    chunks = chunks_of(long_zh, "笔记/旅行.md")
    assert len(chunks) > 1
    assert all(c.text.endswith("。") for c in chunks[:-1])
    assert "".join(c.text for c in chunks) == "我们在成都吃了火锅，然后去了宽窄巷子。" * 40


def test_whatever_a_person_writes_is_read_without_error():
    meta, body = read_user_note(b"---\ntags: [unclosed\n---\nStill here.\n")
    assert meta == {} and "Still here." in body and "unclosed" in body   # nothing is lost
    ruled = chunks_of("---\nJust a thought between rules\n---\n\nMore below.\n\n***\n\nEnd.\n", "Idea.md")
    assert [c.text for c in ruled] == ["Just a thought between rules\nMore below.\nEnd."]
    assert read_user_note(b"---\nnot closed\nbody")[0] == {}
    assert read_user_note("caf\xe9".encode("latin-1"))[1] == "caf\ufffd"
    assert read_user_note(b"\xef\xbb\xbf---\r\naliases: Solo\r\n---\r\nBody\r\n") == ({"aliases": "Solo"}, "Body\n")
    only_title = chunks_of("![[photo.jpg]]\n", "Photos/Holiday.md")
    assert [c.text for c in only_title] == ["Holiday"]   # found by its name at least


# --- scope ------------------------------------------------------------------------------

def make_vault(root: Path, app: dict | None = None) -> Path:
    files = {
        "Home.md": "# Home\n\nWelcome.\n",
        "Projects/Alpha/Plan.md": "# Alpha\n\nThe alpha launch is on 12 March. Dana owns it.\n",
        "Journal/2026/2026-11-02.md": "Ran 10 km along the river. Knee felt fine.\n",
        "笔记/读书.md": "# 读书\n\n最近在读《三体》，很喜欢黑暗森林那一部分。\n",
        "Templates/Daily.md": "# {{date}}\n",
        "Attachments/readme.md": "attachments\n",
        ".trash/Old.md": "old\n",
        "Drafts/draft-1.md": "draft\n",
        "Archive 2019/Old plan.md": "An old plan.\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "Attachments" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / ".obsidian").mkdir(parents=True, exist_ok=True)
    (root / ".obsidian" / "app.json").write_text(json.dumps(app if app is not None else {
        "userIgnoreFilters": ["Templates/", "/^Archive \\d+/"], "attachmentFolderPath": "Attachments"}))
    return root


def in_scope(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in Vault(root).iter_user_notes())


def test_the_default_scope_is_the_vault_without_memory_dot_folders_attachments_and_excluded(tmp_path):
    root = make_vault(tmp_path / "v")
    assert in_scope(root) == ["Drafts/draft-1.md", "Home.md", "Journal/2026/2026-11-02.md",
                              "Projects/Alpha/Plan.md", "笔记/读书.md"]
    vault = Vault(root)
    assert not vault.is_user_note("Memory/Facts/Tea.md") and not vault.is_user_note("Templates/Daily.md")
    assert not vault.is_user_note("Archive 2019/Old plan.md")     # Obsidian's /regex/ filter
    assert vault.is_indexed_path("Home.md") and not vault.is_indexed_path("Attachments/pic.png")


def test_index_globs_choose_the_notes_and_an_empty_list_turns_them_off(tmp_path):
    root = make_vault(tmp_path / "v")
    config = root / ".vaultmem" / "config.toml"
    config.parent.mkdir()
    config.write_text('[index]\nnotes = ["Projects/", "笔记/**"]\nexclude = ["**/draft-*.md"]\n')
    assert in_scope(root) == ["Projects/Alpha/Plan.md", "笔记/读书.md"]
    config.write_text('[index]\nnotes = ["**/*.md"]\nexclude = ["Journal/**", "**/draft-*.md"]\n')
    assert in_scope(root) == ["Home.md", "Projects/Alpha/Plan.md", "笔记/读书.md"]
    config.write_text("[index]\nnotes = []\n")
    assert in_scope(root) == []
    config.write_text('[index]\nnotes = "**/*.md"\n')
    with pytest.raises(ConfigError, match=r"line 2: \[index\] notes must be a list of quoted strings"):
        load_config(root)
    config.write_text('[index]\nnotes = ["../elsewhere/*.md"]\n')
    with pytest.raises(ConfigError, match="vault-relative globs"):
        load_config(root)


# --- end to end -------------------------------------------------------------------------

def checksums(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts}


def folders(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir()}


@pytest.fixture
def notes_vault(tmp_path, git_identity, embedder):
    root = make_vault(tmp_path / "vault")
    (root / "Projects" / "Alpha" / "Plan.md").write_text(
        "---\naliases: [Project A]\n---\n# Alpha\n\n## Launch\nThe alpha launch is on 12 March. "
        "Dana owns it.\n\n## Budget\nWe have 40k EUR for the pilot.\n", encoding="utf-8")
    before, dirs = checksums(root), folders(root)
    api.init(root)
    memory = api.Memory(root, embedder=embedder)
    report = memory.reindex()
    return root, memory, report, before, dirs


def test_init_and_reindex_leave_every_user_file_as_it_was(notes_vault):
    root, memory, report, before, dirs = notes_vault
    after = checksums(root)
    assert {rel: after.get(rel) for rel in before} == before
    created = set(after) - set(before)
    assert all(rel.startswith((".vaultmem/", "Memory/")) for rel in created), created
    new_dirs = folders(root) - dirs
    assert all(d.split("/")[0] in (".vaultmem", "Memory", ".git") for d in new_dirs), new_dirs
    assert report["errors"] == []
    indexed = set(memory.indexer.index.path_hashes())
    assert indexed == set(in_scope(root)) | {p.relative_to(root).as_posix()
                                             for p in memory.vault.iter_notes()}
    # git holds vaultmem's own paths only: no note of the person's is ever committed.
    tracked = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True).stdout
    assert set(tracked.split()) == {"Memory/.gitattributes", "Memory/Memories.base"}


def test_search_and_context_take_a_scope(notes_vault):
    root, memory, *_ = notes_vault
    memory.add("The user prefers oat milk in coffee.", type="preference")
    hits = memory.search("how much money is there for the pilot?", k=3)["hits"]
    assert hits[0]["path"] == "Projects/Alpha/Plan.md" and hits[0]["type"] == "note"
    assert "40k EUR" in hits[0]["text"]
    assert not [h for h in memory.search("pilot budget", scope="memories")["hits"] if h["type"] == "note"]
    notes_only = memory.search("oat milk coffee", scope="notes")["hits"]
    assert notes_only == [] or {h["type"] for h in notes_only} == {"note"}
    assert memory.search("oat milk coffee", scope="memories")["hits"][0]["type"] == "preference"
    assert {h["type"] for h in memory.search("launch date", type="note")["hits"]} == {"note"}
    both = memory.search("what milk does the user take, and when is the alpha launch?", k=10)["hits"]
    assert {"preference", "note"} <= {h["type"] for h in both}

    block = memory.context("When is the alpha launch and what milk does the user like?", budget=400)
    text = block["text"]
    assert text.index("## Relevant memories") < text.index("## From the user's own notes")
    assert "[[Plan#Launch]]" in text and block["notes"] >= 1 and block["memories"] >= 1
    only_notes = memory.context("When is the alpha launch?", budget=400, scope="notes")
    assert "## Relevant memories" not in only_notes["text"] and only_notes["memories"] == 0
    zh = memory.context("我最近在读什么书？", budget=300, scope="notes")["text"]
    assert "## 用户自己的笔记" in zh and "三体" in zh
    with pytest.raises(Exception, match="unknown scope 'everything'"):
        memory.search("tea", scope="everything")


def test_the_persons_notes_are_never_changed_through_vaultmem(notes_vault):
    root, memory, *_ = notes_vault
    plan = root / "Projects" / "Alpha" / "Plan.md"
    before = plan.read_bytes()
    for ref in ("Projects/Alpha/Plan.md", str(plan)):
        with pytest.raises(NoteNotFound, match="is not a memory note"):
            memory.forget(ref)
        with pytest.raises(NoteNotFound, match="is not a memory note"):
            memory.correct(ref, "The alpha launch is on 20 March.")
    assert plan.read_bytes() == before


def test_cli_search_scope_and_type_note(notes_vault):
    root, *_ = notes_vault
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    done = subprocess.run([VAULTMEM, "--vault", str(root), "search", "pilot budget", "--scope", "notes",
                           "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert hits and hits[0]["path"] == "Projects/Alpha/Plan.md"
    bad = subprocess.run([VAULTMEM, "--vault", str(root), "search", "x", "--scope", "everything"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and "memories" in bad.stderr


def test_notes_take_at_most_half_the_budget_while_memories_compete():
    from vaultmem.retrieve.context import build_context
    from vaultmem.retrieve.hits import Hit

    def hit(n, type, score, text):
        return Hit(id=f"id{n}", path=f"p{n}.md", type=type, title=f"T{n}", text=text, score=score,
                   status="active", created="2026-11-01", updated="2026-11-01", source_messages=[],
                   sources=[f"[[T{n}#Part]]"] if type == "note" else [])

    def count(text):
        return len(text.split())

    notes = [hit(n, "note", 2.0 - n / 10, "A long passage of the user's notes " * 4) for n in range(6)]
    memories = [hit(10 + n, "fact", 0.5, f"The user fact number {n}.") for n in range(6)]
    block = build_context(notes + memories, budget=200, count_tokens=count)
    body = block["text"].split("## From the user's own notes")[1]
    assert count(body) <= 100 and block["notes"] >= 1 and block["memories"] == 6
    alone = build_context(notes, budget=200, count_tokens=count)   # nothing else to show
    assert alone["notes"] > block["notes"] and alone["tokens"] > 100


def test_turning_the_notes_off_takes_them_out_of_the_index(notes_vault, embedder):
    root, memory, report, *_ = notes_vault
    config = root / ".vaultmem" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert 'notes = ["**/*.md"]' in text
    config.write_text(text.replace('notes = ["**/*.md"]', "notes = []"), encoding="utf-8")
    again = api.Memory(root, embedder=embedder)
    removed = again.reindex()
    assert removed["removed"] == report["added"] and removed["errors"] == []
    assert again.search("pilot budget", scope="notes")["hits"] == []
    assert again.doctor()["ok"]
