"""What a person reading a built vault sees, apart from retrieval: where a string is stored
anywhere in it (the secret check of SPEC §7) and simple hygiene counts. Used by memquality.py.

The vault is read from the outside: its notes through vaultmem's own note parser, its files
as raw bytes, git's objects and LanceDB's tables decoded, so a secret cannot hide in a
compressed object."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

MEMORY_KINDS = ("fact", "preference", "event", "procedure")  # what SPEC §7 calls memory notes


@dataclass
class VaultNote:
    rel: str       # path relative to the vault, with forward slashes
    type: str
    status: str
    body: str
    statement: str  # body without a leading heading
    valid_from: str

    @property
    def stem(self) -> str:
        return Path(self.rel).stem

    @property
    def is_active_memory(self) -> bool:
        return self.type in MEMORY_KINDS and self.status == "active"


def read_notes(vault: Path) -> tuple[list[VaultNote], list[str]]:
    """Every note under the vault's memory root, parsed by `vaultmem.note`; and the notes it
    could not parse (`"path: reason"`)."""
    from vaultmem.config import load_config
    from vaultmem.note import read_note

    root = vault / load_config(vault).memory_root
    notes, errors = [], []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        try:
            note = read_note(path)
        except Exception as exc:  # NoteParseError, or anything else a broken file raises
            errors.append(f"{rel}: {exc}")
            continue
        notes.append(VaultNote(rel, note.type, note.status, note.body, note.statement(),
                               str(note.get("valid_from") or "")[:10]))
    return notes, errors


# --- the secret check ------------------------------------------------------------------

def decoded_stores(vault: Path) -> dict[str, str]:
    """Text of the vault's stores that raw bytes may hide: every git object decompressed
    (reachable or not), `git log -p --all` (SPEC §7), and each LanceDB table's rows."""
    stores = {}
    if (vault / ".git").exists():
        for name, args in (("git log -p --all", ["log", "-p", "--all", "--no-color"]),
                           ("git objects", ["cat-file", "--batch-all-objects", "--batch"])):
            done = subprocess.run(["git", "-C", str(vault), *args], capture_output=True)
            stores[name] = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    for table_dir in sorted(vault.rglob("*.lance")):
        if table_dir.is_dir() and not table_dir.parent.name.endswith(".lance") and "_indices" not in table_dir.parts:
            stores[f"lancedb table {table_dir.relative_to(vault).as_posix()}"] = _lance_rows(table_dir)
    return stores


def _lance_rows(table_dir: Path) -> str:
    try:
        import lancedb

        table = lancedb.connect(str(table_dir.parent)).open_table(table_dir.name[:-len(".lance")])
        data = table.to_arrow()
        columns = [c for c in data.column_names if c != "vector"]
        return repr(data.select(columns).to_pylist())
    except Exception as exc:  # an unreadable table is reported, its raw bytes are still scanned
        return f"(unreadable: {exc})"


def find_text(text: str, vault: Path, outputs: dict[str, str], stores: dict[str, str]) -> list[str]:
    """Every place `text` occurs (case-insensitively): a file's name or raw bytes anywhere
    under the vault (`.git/` and `.vaultmem/` included), a decoded store, a command's output."""
    needle = text.lower()
    raw = re.compile(re.escape(text.encode("utf-8")), re.IGNORECASE)
    places = []
    for path in sorted(vault.rglob("*")):
        rel = path.relative_to(vault).as_posix()
        if needle in path.name.lower():
            places.append(f"file name {rel}")
        if path.is_file() and not path.is_symlink():
            try:
                if raw.search(path.read_bytes()):
                    places.append(f"file {rel}")
            except OSError:
                continue
    places += [name for name, content in stores.items() if needle in content.lower()]
    places += [f"output of `{command}`" for command, out in outputs.items() if needle in out.lower()]
    return places


# --- hygiene ---------------------------------------------------------------------------
# Simple, documented heuristics for a follow-up issue; they flag, they do not score.

# Words that carry no content of their own: articles, forms of be/have/do, modal verbs and
# coordinating conjunctions. "The user is allergic to penicillin" keeps 4 (user, allergic,
# to, penicillin); "The user and others will see" keeps 3.
STOPWORDS = frozenset("""a an the and or but nor so is am are was were be been being do does
did has have had will would can could should shall may might must""".split())
CODE_KEYWORDS = frozenset("""select from where insert update delete join group order by values
create drop table def return import class lambda none null true false async await const let
var function elif else endif fi done esac echo sudo""".split())
_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d+")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_FENCE = re.compile(r"(?<!\\)```")


def content_words(text: str) -> int:
    """Words that are not STOPWORDS; links and `[REDACTED:kind]` markers do not count.
    Chinese has no spaces: a run of Han characters counts one word per two characters."""
    text = re.sub(r"\[\[[^\]]*\]\]|\[REDACTED:[^\]]*\]", " ", text)
    han = sum((len(run) + 1) // 2 for run in _HAN.findall(text))
    latin = [w for w in _WORD.findall(_HAN.sub(" ", text)) if w.lower() not in STOPWORDS]
    return han + len(latin)


def junk_entity_reason(name: str) -> str | None:
    """Why an entity hub's name looks like junk, or None."""
    if re.fullmatch(r"[A-Z]{1,3}", name):
        return "abbreviation of <= 3 capitals"
    if name.lower() in CODE_KEYWORDS:
        return "code keyword"
    if "redacted" in name.lower():
        return "holds REDACTED"
    if re.fullmatch(r"[\d\s.,:-]+", name):
        return "digits only"
    return None


def broken_fence_reason(body: str) -> str | None:
    """Why a session note's code fences are broken: an escaped fence (\\```) renders as
    literal backticks with the code as prose; an odd count leaves a fence open."""
    if "\\```" in body:
        return "escaped fence \\```"
    if len(_FENCE.findall(body)) % 2:
        return "odd number of ``` fences"
    return None


def hygiene(notes: list[VaultNote]) -> dict[str, list[str]]:
    """Flagged notes per check: `{"short_memories", "junk_entities", "uuid_sessions",
    "broken_fences"}`, each a list of `"path (why)"`."""
    found = {"short_memories": [], "junk_entities": [], "uuid_sessions": [], "broken_fences": []}
    for note in notes:
        if note.is_active_memory and content_words(note.statement) < 4:
            found["short_memories"].append(f"{note.rel} ({note.statement[:60]!r})")
        elif note.type == "entity" and (why := junk_entity_reason(note.stem)):
            found["junk_entities"].append(f"{note.rel} ({why})")
        elif note.type == "session":
            if _UUID.search(note.stem):
                found["uuid_sessions"].append(note.rel)
            if why := broken_fence_reason(note.body):
                found["broken_fences"].append(f"{note.rel} ({why})")
    return found
