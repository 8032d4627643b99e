"""`init` leaves the person's vault root as it found it (issue 34): vaultmem's git files live
in its own folders, `.vaultmem/.gitignore` (the state folder ignores itself) and
`<memory root>/.gitattributes` (the merge driver's attribute), and Obsidian's `.trash/` is
excluded in `.git/info/exclude`. A vault an older vaultmem made, with its lines in root
`.gitignore` and `.gitattributes` files, keeps working and keeps those files byte for byte.
All with real git."""

import hashlib
import subprocess

import pytest

from vaultmem import api
from vaultmem.doctor import sync_findings
from vaultmem.store.vault import Vault
from vaultmem.sync import remote

# What an older vaultmem wrote at the vault's root.
OLD_GITIGNORE = (b"*.pdf\n\n# vaultmem: index, daemon state and Obsidian's trash stay out of git\n"
                 b".vaultmem/\n.trash/\n")
OLD_GITATTRIBUTES = (b"# vaultmem: memory notes edited on two devices are merged by property\n"
                     b"Memory/**/*.md merge=vaultmem\n")


def git(cwd, *args) -> str:
    return subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, check=True).stdout


def merge_attribute(cwd, path: str) -> str:
    return git(cwd, "check-attr", "merge", "--", path).rsplit(": ", 1)[1].strip()


def ignored(cwd, path: str) -> bool:
    return subprocess.run(["git", "check-ignore", "-q", "--no-index", "--", path], cwd=str(cwd)).returncode == 0


def listing(root) -> dict[str, str]:
    """The root's entries: a file by its bytes' sha256, a folder as 'dir'."""
    return {p.name: "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.iterdir()}


def persons_vault(root):
    """An Obsidian vault of the person's: notes, Obsidian's config, its trash, a .gitignore."""
    for rel, text in {"Daily/2026-11-28.md": "Went running.\n", "Ideas.md": "A garden.\n",
                      ".obsidian/app.json": "{}\n", ".trash/Old.md": "gone\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".gitignore").write_bytes(b"*.pdf\r\nno newline at the end")
    return root


def test_a_fresh_init_adds_only_the_folders_vaultmem_owns(tmp_path, git_identity):
    root = persons_vault(tmp_path / "vault")
    before = listing(root)
    result = api.init(root)
    after = listing(root)
    assert {k: v for k, v in after.items() if k in before} == before      # byte for byte
    assert set(after) - set(before) == {".vaultmem", "Memory", ".git"}     # .git: it made the repo
    assert result["git"] == "created a repository"
    assert not any(item.startswith((".gitignore", ".gitattributes")) for item in result["created"])
    assert git(root, "ls-files").splitlines() == ["Memory/.gitattributes", "Memory/Memories.base"]
    assert api.init(root)["created"] == [] and listing(root) == after     # again: nothing new


def test_init_in_the_persons_repository_adds_no_file_at_the_root(tmp_path, git_identity):
    root = persons_vault(tmp_path / "vault")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "my notes")
    before = listing(root)
    api.init(root)
    after = listing(root)
    assert set(after) - set(before) == {".vaultmem", "Memory"}
    assert {k: after[k] for k in before if k != ".git"} == {k: v for k, v in before.items() if k != ".git"}
    # vaultmem committed its own folder only; the person's tree is as they left it.
    assert git(root, "show", "--name-only", "--format=", "HEAD").splitlines() == [
        "Memory/.gitattributes", "Memory/Memories.base"]
    assert git(root, "status", "--porcelain") == ""


def test_git_add_all_after_init_takes_no_state_and_no_trash(tmp_path, git_identity):
    root = persons_vault(tmp_path / "vault")
    api.init(root)
    for rel in ("index/chunks.lance/data.bin", "daemon.log", "state.db", "changes/1.pending"):
        (root / ".vaultmem" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / ".vaultmem" / rel).write_text("state\n")
    (root / ".trash" / "Deleted memory.md").write_text("The user's PIN is 1234.\n")
    assert ".vaultmem" not in git(root, "status", "--porcelain", "--untracked-files=all")
    git(root, "add", "-A")          # what obsidian-git does
    tracked = git(root, "ls-files").splitlines()
    assert not [p for p in tracked if p.startswith((".vaultmem/", ".trash/"))], tracked
    assert {"Daily/2026-11-28.md", "Ideas.md", ".gitignore", "Memory/.gitattributes"} <= set(tracked)
    assert "/.trash/" in (root / ".git" / "info" / "exclude").read_text().splitlines()


@pytest.mark.parametrize("memory_root", ["Memory", "Agent Memory/Notes"])
def test_the_merge_driver_applies_to_memory_notes_only(tmp_path, git_identity, memory_root):
    root = tmp_path / "vault"
    (root / ".vaultmem").mkdir(parents=True)
    (root / ".vaultmem" / "config.toml").write_text(f'memory_root = "{memory_root}"\n')
    api.init(root)
    assert not (root / ".gitattributes").exists()
    for note in ("Facts/x.md", "Sessions/2026-11-29 chat.md", "Facts/deep/er.md", "top.md"):
        assert merge_attribute(root, f"{memory_root}/{note}") == "vaultmem", note
    assert merge_attribute(root, f"{memory_root}/Memories.base") == "unspecified"
    assert merge_attribute(root, "Daily/2026-11-28.md") == "unspecified"   # the person's own
    assert sync_findings(Vault(root), {})["merge_driver"] == []


def test_a_vault_in_a_subfolder_of_a_repository(tmp_path, git_identity):
    git(tmp_path, "init", "-q", "repo")
    repo = tmp_path / "repo"
    (repo / "README.md").write_text("my repo\n")
    api.init(repo / "my notes")
    assert sorted(p.name for p in repo.iterdir()) == [".git", "README.md", "my notes"]
    assert sorted(p.name for p in (repo / "my notes").iterdir()) == [".vaultmem", "Memory"]
    assert merge_attribute(repo, "my notes/Memory/Facts/x.md") == "vaultmem"
    assert ignored(repo, "my notes/.vaultmem/index/x") and ignored(repo, "my notes/.trash/x.md")
    assert not ignored(repo, "elsewhere/.trash/x.md")       # the exclude names this vault's trash
    assert git(repo, "ls-files").splitlines() == ["my notes/Memory/.gitattributes",
                                                  "my notes/Memory/Memories.base"]


def test_a_vault_an_older_vaultmem_made_keeps_working_and_its_root_files(tmp_path, git_identity):
    root = persons_vault(tmp_path / "vault")
    (root / ".gitignore").write_bytes(OLD_GITIGNORE)
    (root / ".gitattributes").write_bytes(OLD_GITATTRIBUTES)
    (root / ".vaultmem").mkdir()
    (root / ".vaultmem" / "config.toml").write_text('memory_root = "Memory"\n')
    (root / ".vaultmem" / "daemon.log").write_text("old state\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a vault of an older vaultmem")
    exclude = (root / ".git" / "info" / "exclude").read_bytes()
    # Before this version's init: the root lines still do the work.
    assert merge_attribute(root, "Memory/Facts/x.md") == "vaultmem"
    assert sync_findings(Vault(root), {})["ignores"] == []

    api.init(root)
    assert (root / ".gitignore").read_bytes() == OLD_GITIGNORE          # left as they were
    assert (root / ".gitattributes").read_bytes() == OLD_GITATTRIBUTES
    assert (root / ".git" / "info" / "exclude").read_bytes() == exclude  # .trash/ was ignored already
    assert merge_attribute(root, "Memory/Facts/x.md") == "vaultmem"
    assert git(root, "status", "--porcelain") == ""
    findings = sync_findings(Vault(root), {})
    assert findings["merge_driver"] == [] and findings["ignores"] == []
    # Its own folders now carry the same rules: the person may delete the root lines.
    (root / ".gitignore").write_text("*.pdf\n")
    (root / ".gitattributes").unlink()
    assert merge_attribute(root, "Memory/Facts/x.md") == "vaultmem"
    assert ignored(root, ".vaultmem/daemon.log")
    assert remote.ensure_ignores(root) == ["/.trash/ in .git/info/exclude"]
    assert ignored(root, ".trash/Old.md")


def test_a_fresh_clone_gets_its_ignores_back(tmp_path, git_identity):
    remote_repo, a, b = tmp_path / "remote.git", tmp_path / "a", tmp_path / "b"
    git(tmp_path, "init", "-q", "--bare", str(remote_repo))
    git(tmp_path, "clone", "-q", str(remote_repo), str(a))
    api.init(a)
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote_repo), str(b))
    assert sorted(p.name for p in b.iterdir()) == [".git", "Memory"]
    # Opening the clone's memory gives .vaultmem/ its .gitignore before anything is written.
    memory = api.Memory(b)
    (b / ".vaultmem" / "daemon.log").write_text("state\n")
    assert git(b, "status", "--porcelain") == ""
    problems = sync_findings(memory.vault, {})
    assert any(".trash/" in p for p in problems["ignores"]), problems
    assert any("not registered" in p for p in problems["merge_driver"]), problems
    fixed = memory.repair()                            # what `doctor --fix` does
    assert fixed["ignores"] == ["/.trash/ in .git/info/exclude"] and fixed["merge_driver"]
    assert sync_findings(memory.vault, {})["ignores"] == []
    assert sync_findings(memory.vault, {})["merge_driver"] == []
    assert sorted(p.name for p in b.iterdir()) == [".git", ".vaultmem", "Memory"]
