"""vaultmem/store/vault.py: finding the vault, its layout, safe names, atomic writes, ignore rules."""

import os
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.errors import AmbiguousNote, NoteNotFound, UnsafeName, VaultNotFound
from vaultmem.store.config import load_config
from vaultmem.store.files import atomic_write
from vaultmem.store.init import LAYOUT, init_vault
from vaultmem.store.titles import MAX_TITLE, check_title, safe_title
from vaultmem.store.vault import Vault, find_vault

FORBIDDEN_IN_NAMES = re.compile(r"[#|^:%\[\]/\\]")


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    init_vault(root)
    return Vault(root)


def write(path, text="---\nid: X\n---\nx\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- finding the vault ------------------------------------------------------------------

def test_explicit_vault_wins_over_the_environment(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.setenv("VAULTMEM_VAULT", str(tmp_path / "b"))
    assert find_vault(tmp_path / "a", cwd=tmp_path) == (tmp_path / "a").resolve()
    assert find_vault(None, cwd=tmp_path) == (tmp_path / "b").resolve()


@pytest.mark.parametrize("marker", [".vaultmem", ".obsidian"])
def test_nearest_folder_upward_with_a_marker_is_the_vault(tmp_path, monkeypatch, marker):
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    outer = tmp_path / "outer"
    (outer / ".obsidian").mkdir(parents=True)
    inner = outer / "Projects" / "inner"
    (inner / marker).mkdir(parents=True)
    deep = inner / "Memory" / "Facts"
    deep.mkdir(parents=True)
    assert find_vault(None, cwd=deep) == inner.resolve()
    assert find_vault(None, cwd=outer / "Projects") == outer.resolve()


def test_no_vault_anywhere_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    with pytest.raises(VaultNotFound, match="--vault PATH.*VAULTMEM_VAULT.*vaultmem init"):
        find_vault(None, cwd=tmp_path)


def test_explicit_vault_that_does_not_exist_is_an_error(tmp_path):
    with pytest.raises(VaultNotFound, match="does not exist.*vaultmem init"):
        find_vault(tmp_path / "nowhere", cwd=tmp_path)


# --- layout and init --------------------------------------------------------------------

def test_init_creates_the_spec_layout_config_and_the_state_folders_gitignore(tmp_path):
    result = init_vault(tmp_path / "v")
    root = tmp_path / "v"
    for name in ("Facts", "Preferences", "Events", "Procedures", "Entities", "Sessions",
                 "Archive", "Inbox"):
        assert (root / "Memory" / name).is_dir(), name
    assert (root / ".vaultmem" / "config.toml").is_file()
    # .vaultmem/ keeps itself out of git; the vault's root gets no ignore file.
    assert "*" in (root / ".vaultmem" / ".gitignore").read_text().splitlines()
    assert sorted(p.name for p in root.iterdir()) == [".vaultmem", "Memory"]
    assert result["vault"] == str(root.resolve())
    assert "Memory/Facts/" in result["created"] and ".vaultmem/.gitignore" in result["created"]


def test_init_again_changes_nothing_and_keeps_the_users_edits(tmp_path):
    root = tmp_path / "v"
    init_vault(root)
    config = root / ".vaultmem" / "config.toml"
    config.write_text('memory_root = "Memory"\nuser = "alice"\n')
    ignore = root / ".vaultmem" / ".gitignore"
    ignore.write_text("*\n# mine\n")
    assert init_vault(root)["created"] == []
    assert config.read_text() == 'memory_root = "Memory"\nuser = "alice"\n'
    assert ignore.read_text() == "*\n# mine\n"


def test_init_leaves_the_persons_own_gitignore_as_it_was(tmp_path):
    data = b"*.pdf\r\n/.vaultmem\r\nno newline at the end"
    (tmp_path / ".gitignore").write_bytes(data)
    init_vault(tmp_path)
    init_vault(tmp_path)
    assert (tmp_path / ".gitignore").read_bytes() == data
    assert not (tmp_path / ".gitattributes").exists()


def test_init_uses_a_configured_memory_root(tmp_path):
    write(tmp_path / ".vaultmem" / "config.toml", 'memory_root = "Agent/Memory"\n')
    init_vault(tmp_path)
    assert all((tmp_path / "Agent" / "Memory" / name).is_dir() for name in LAYOUT)
    assert not (tmp_path / "Memory").exists()


def test_init_on_a_file_is_an_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(VaultNotFound, match="is a file"):
        init_vault(tmp_path / "file")


def test_folder_for_each_type_and_unknown_type(vault):
    assert vault.folder_for("preference") == vault.root / "Memory" / "Preferences"
    assert vault.folder_for("session") == vault.root / "Memory" / "Sessions"
    with pytest.raises(UnsafeName, match="unknown note type"):
        vault.folder_for("../../etc")


# --- safe, unique file names --------------------------------------------------------------

@pytest.mark.parametrize("title,expected", [
    ("a#b|c^d:e%%f[[g]]h/i\\j", "a b c d e f g h i j"),
    ("../../etc/passwd", "etc passwd"),
    ("..", "Untitled"),
    (".hidden", "hidden"),
    ("   ", "Untitled"),
    ("CON", "Untitled CON"),
    ("nul.txt", "Untitled nul.txt"),
    ("Tea: the sequel?", "Tea the sequel"),
    ("line\nbreak\ttab", "line break tab"),
    ("喜欢喝乌龙茶", "喜欢喝乌龙茶"),
    ("Café au lait", "Café au lait"),
    # a ratio, a time and a percentage keep their sense with look-alikes no system refuses
    ("The user quit 16:8 fasting", "The user quit 16\ua7898 fasting"),
    ("A 1:1 with Priya at 3:30", "A 1\ua7891 with Priya at 3\ua78930"),
    ("10% off the venue", "10\uff05 off the venue"),
])
def test_safe_title(title, expected):
    assert safe_title(title) == expected


def test_safe_title_cuts_long_titles_at_a_word():
    title = safe_title("word " * 40)
    assert len(title) <= MAX_TITLE and title.endswith("word")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_safe_title_is_always_a_plain_file_name(text):
    title = safe_title(text)
    assert title and not FORBIDDEN_IN_NAMES.search(title)
    assert not title.startswith(".") and title == title.strip()
    assert len(title) <= MAX_TITLE + len("Untitled ")
    assert title not in (".", "..")


@pytest.mark.parametrize("title,match", [
    ("a/b", "path separator"),
    ("..\\x", "path separator"),
    ("Tea: now", r"\(:\)"),
    ("50%% done", r"\(%\)"),
    ("[[link]]", r"\(\[ \]\)"),
    (" padded ", "not a safe file name"),
    ("PRN", "not a safe file name"),
])
def test_check_title_refuses_and_suggests(title, match):
    with pytest.raises(UnsafeName, match=match):
        check_title(title)


def test_check_title_accepts_a_plain_title():
    assert check_title("Prefers dark mode") == "Prefers dark mode"
    assert check_title("最近在戒咖啡") == "最近在戒咖啡"


def test_unique_path_never_clashes_with_a_note_anywhere_in_the_vault(vault):
    write(vault.root / "Projects" / "Tea.md")
    first = vault.unique_path(vault.folder_for("fact"), "tea")
    assert first == vault.folder_for("fact") / "tea 2.md"
    write(first)
    assert vault.unique_path(vault.folder_for("event"), "Tea").name == "Tea 3.md"
    assert vault.unique_path(vault.folder_for("event"), "Coffee").name == "Coffee.md"


def test_unique_path_keeps_titles_with_traversal_inside_the_folder(vault):
    folder = vault.folder_for("fact")
    for title in ("../../../etc/passwd", "/absolute", "..", "a/../../b", "C:\\Windows"):
        path = vault.unique_path(folder, title)
        assert path.parent == folder, title
        assert not FORBIDDEN_IN_NAMES.search(path.stem), title


def test_unique_path_sees_a_decomposed_unicode_name_as_taken(vault):
    import unicodedata

    write(vault.root / "Projects" / (unicodedata.normalize("NFD", "Café") + ".md"))
    assert vault.unique_path(vault.folder_for("fact"), "Café").name == "Café 2.md"


def test_unique_path_ignores_names_in_dot_folders(vault):
    write(vault.root / ".trash" / "Tea.md")
    assert vault.unique_path(vault.folder_for("fact"), "Tea").name == "Tea.md"


# --- atomic writes --------------------------------------------------------------------------

def test_atomic_write_creates_folders_and_writes_exact_text(tmp_path):
    path = tmp_path / "new" / "folder" / "note.md"
    atomic_write(path, "---\r\nid: A\r\n---\r\n中文\r\n")
    assert path.read_bytes() == "---\r\nid: A\r\n---\r\n中文\r\n".encode("utf-8")
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)


def test_atomic_write_replaces_by_rename_not_in_place(tmp_path):
    path = tmp_path / "note.md"
    path.write_text("old")
    os.chmod(path, 0o600)
    witness = tmp_path / "hard link to the old file"
    os.link(path, witness)
    atomic_write(path, "new")
    assert path.read_text() == "new"
    assert witness.read_text() == "old"  # the old inode was never written to
    assert os.stat(path).st_ino != os.stat(witness).st_ino
    assert path.stat().st_mode & 0o777 == 0o600  # the user's mode is kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard link to the old file", "note.md"]


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temp_file(tmp_path):
    path = tmp_path / "note.md"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(path, "half \udc80 written")  # a lone surrogate cannot be encoded
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]


# --- ignore rules and scanning -----------------------------------------------------------

@pytest.mark.parametrize("rel,ignored", [
    ("Memory/Facts/Tea.md", False),
    ("Memory/Facts/喜欢喝乌龙茶.md", False),
    ("Projects/Garden.md", False),
    (".obsidian/workspace.md", True),
    (".trash/Tea.md", True),
    (".git/description.md", True),
    (".vaultmem/notes.md", True),
    ("Memory/Facts/Tea.txt", True),
    ("Memory/Facts/photo.png", True),
    ("Memory/Facts/.vaultmem-abc.tmp", True),
    ("Memory/Facts/.hidden.md", True),
    ("Memory/Inbox/chat.md", True),
])
def test_is_ignored(vault, rel, ignored):
    assert vault.is_ignored(rel) is ignored


def test_a_renamed_obsidian_config_folder_is_ignored(tmp_path):
    write(tmp_path / ".obsidian-work" / "app.json", "{}")
    init_vault(tmp_path)
    vault = Vault(tmp_path)
    assert vault.config.obsidian_dir == ".obsidian-work"
    assert vault.is_ignored(".obsidian-work/snippets.md")


def test_iter_notes_applies_the_ignore_rules(vault):
    memory = vault.memory_dir
    wanted = [write(memory / "Facts" / "Tea.md"), write(memory / "Preferences" / "喜欢喝乌龙茶.md"),
              write(memory / "Sessions" / "2026-11-29 chat.md"), write(memory / "Facts" / "Sub" / "Deep.md")]
    write(memory / "Inbox" / "transcript.md")
    write(memory / "Facts" / "notes.txt")
    write(memory / "Facts" / ".vaultmem-123.tmp")
    write(memory / ".trash" / "Old.md")
    write(vault.root / "Projects" / "Garden.md")  # the user's own note, outside the memory root
    write(vault.root / ".obsidian" / "x.md")
    (memory / "Facts" / "x.md").mkdir()  # a directory named like a note
    assert sorted(vault.iter_notes()) == sorted(wanted)


def test_iter_notes_on_a_vault_without_memory_folder_yields_nothing(tmp_path):
    assert list(Vault(tmp_path).iter_notes()) == []


# --- paths and NOTE references --------------------------------------------------------------

def test_rel_and_abs(vault):
    path = vault.folder_for("fact") / "Tea.md"
    assert vault.rel(path) == "Memory/Facts/Tea.md"
    assert vault.rel("Memory/Facts/Tea.md") == "Memory/Facts/Tea.md"
    assert vault.abs("Memory/Facts/Tea.md") == path
    for escape in ("../outside.md", "Memory/../../outside.md", "/etc/passwd"):
        with pytest.raises(UnsafeName, match="outside the vault"):
            vault.abs(escape)


def test_resolve_by_path_title_and_id(vault, monkeypatch):
    tea = write(vault.folder_for("fact") / "Tea.md", "---\nid: 01ABCTEA\ntype: fact\n---\nTea.\n")
    crlf = write(vault.folder_for("fact") / "Crlf.md", "\ufeff---\r\nid: 'CRLF1'\r\n---\r\nx\r\n")
    zh = write(vault.folder_for("preference") / "喜欢喝乌龙茶.md")
    assert vault.resolve("Memory/Facts/Tea.md") == tea
    assert vault.resolve(str(tea)) == tea
    assert vault.resolve("Tea") == tea
    assert vault.resolve("tea.md") == tea
    assert vault.resolve("01ABCTEA") == tea
    assert vault.resolve("CRLF1") == crlf
    assert vault.resolve("喜欢喝乌龙茶") == zh
    monkeypatch.chdir(vault.folder_for("fact"))
    assert vault.resolve("Tea.md") == tea


def test_resolve_errors_say_what_to_do(vault, tmp_path):
    write(vault.folder_for("fact") / "Tea.md")
    write(vault.folder_for("preference") / "tea.md")
    outside = write(tmp_path / "outside.md")
    with pytest.raises(NoteNotFound, match="vaultmem list"):
        vault.resolve("Coffee")
    with pytest.raises(NoteNotFound):
        vault.resolve("  ")
    with pytest.raises(NoteNotFound):
        vault.resolve(str(outside))
    with pytest.raises(NoteNotFound):
        vault.resolve("../outside.md")
    with pytest.raises(AmbiguousNote, match="give the path"):
        vault.resolve("TEA")
    assert vault.resolve("tea") == vault.folder_for("preference") / "tea.md"  # exact case wins


def test_vault_config_comes_from_the_vault(tmp_path):
    write(tmp_path / ".vaultmem" / "config.toml", 'memory_root = "Brain"\n')
    vault = Vault(tmp_path)
    assert vault.config == load_config(tmp_path)
    assert vault.memory_dir == tmp_path.resolve() / "Brain"


# --- symlinked notes (Obsidian follows them; vaultmem must not crash or break them) ------------

def test_a_symlinked_note_keeps_its_place_in_the_vault(vault, tmp_path):
    target = write(tmp_path / "elsewhere" / "Shared.md", "---\nid: SHARED1\n---\nx\n")
    link = vault.folder_for("fact") / "Shared.md"
    link.symlink_to(target)
    assert list(vault.iter_notes()) == [link]
    assert vault.rel(link) == "Memory/Facts/Shared.md"
    assert vault.resolve("Memory/Facts/Shared.md") == link
    assert vault.resolve("SHARED1") == link
    with pytest.raises(UnsafeName, match="outside the vault"):
        vault.rel(target)


def test_atomic_write_through_a_symlink_updates_the_target_and_keeps_the_link(tmp_path):
    target = write(tmp_path / "real" / "note.md", "old")
    link = tmp_path / "vault" / "note.md"
    link.parent.mkdir()
    link.symlink_to(target)
    atomic_write(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert sorted(p.name for p in link.parent.iterdir()) == ["note.md"]


def test_a_file_given_as_the_vault_is_named_as_a_file(tmp_path):
    (tmp_path / "notes.md").write_text("x")
    with pytest.raises(VaultNotFound, match="is a file, not a vault folder"):
        find_vault(tmp_path / "notes.md", cwd=tmp_path)


def test_atomic_write_without_overwrite_never_replaces(tmp_path):
    path = tmp_path / "note.md"
    atomic_write(path, "first", overwrite=False)
    assert path.read_text() == "first"
    with pytest.raises(FileExistsError):
        atomic_write(path, "second", overwrite=False)
    assert path.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]


def test_write_new_takes_the_next_name_when_another_writer_got_there_first(vault):
    import threading

    folder = vault.folder_for("fact")
    texts = [f"---\nid: N{i}\n---\nnote {i}\n" for i in range(8)]
    paths, start = [], threading.Barrier(len(texts))

    def writer(text):
        start.wait()
        paths.append(vault.write_new(folder, "Same title", text))

    threads = [threading.Thread(target=writer, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(paths)) == len(texts)
    assert sorted(p.read_text() for p in paths) == sorted(texts)  # nobody's note was replaced
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


def test_note_names_are_relisted_only_where_the_vault_changed(tmp_path, monkeypatch):
    """unique_path knows every note's name (Obsidian resolves short links by name), without
    walking the whole vault for each new note: only folders whose mtime moved are listed."""
    import os

    from vaultmem.store import vault as vault_module

    root = tmp_path / "v"
    for folder in ("Memory/Facts", "Projects/Old", "Journal", ".obsidian"):
        (root / folder).mkdir(parents=True)
    (root / "Projects/Old/Tea.md").write_text("x")
    (root / "Journal/Walk.md").write_text("x")
    (root / ".obsidian/Hidden.md").write_text("x")
    v = Vault(root, load_config(root))
    old = time.time_ns() - 10 * 1_000_000_000   # folders last changed long ago: trusted
    for folder in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
        os.utime(folder, ns=(old, old))
    listed = []
    real = vault_module._list_folder
    monkeypatch.setattr(vault_module, "_list_folder", lambda f: listed.append(f) or real(f))
    assert v._names_in_vault() == {"tea", "walk"}
    first = len(listed)
    assert first == 6 and not any(".obsidian" in f for f in listed)
    listed.clear()
    assert v._names_in_vault() == {"tea", "walk"} and listed == []
    # A note added anywhere, even in the same mtime tick, is seen; only its folder is listed.
    (root / "Journal/Swim.md").write_text("x")
    assert v._names_in_vault() == {"tea", "walk", "swim"}
    assert listed == [str(root / "Journal")]
    assert v.unique_path(v.folder_for("fact"), "Swim").name == "Swim 2.md"
    (root / "Projects/Old/Tea.md").rename(root / "Projects/Old/Chai.md")
    (root / "Journal/Swim.md").unlink()
    assert v._names_in_vault() == {"chai", "walk"}
    import shutil
    shutil.rmtree(root / "Projects")
    assert v._names_in_vault() == {"walk"}
