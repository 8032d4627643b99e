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
    """Every note under the vault's memory root, parsed by `vaultmem.store.note`; and the notes it
    could not parse (`"path: reason"`)."""
    from vaultmem.store.config import load_config
    from vaultmem.store.note import read_note

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
    (reachable or not), `git log -p --all` (SPEC §7), and each LanceDB table's rows. The log
    names blobs in full (`--full-index`): its abbreviated "index 2ba5c4d..0731593" lines are a
    hash's digits too short for `_said` to tell from a code. In batch 2 tune's b2-c-028 the
    shed code "3159" was found in that log alone (in no file, object or output) in one run, and
    not in the next: the commits' times, and so every id, differ from run to run."""
    stores = {}
    if (vault / ".git").exists():
        for name, args in (("git log -p --all", ["log", "-p", "--all", "--full-index", "--no-color"]),
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
    under the vault (`.git/` and `.vaultmem/` included), a decoded store, a command's output.
    An occurrence inside a longer run of hex digits (a content hash, a git object id) is no
    occurrence: "5821" turned up in a chunk's sha-256 as "…a465821fa6…", in one run of two."""
    raw = re.compile(re.escape(text.encode("utf-8")), re.IGNORECASE)
    text_pattern = re.compile(re.escape(text), re.IGNORECASE)
    places = []
    for path in sorted(vault.rglob("*")):
        rel = path.relative_to(vault).as_posix()
        if _said(text_pattern, path.name, HEX_CHARS) or _said(text_pattern, rel, HEX_CHARS):   # .git/objects/62/6bc3…
            places.append(f"file name {rel}")
        if path.is_file() and not path.is_symlink():
            try:
                if _said(raw, path.read_bytes(), HEX_BYTES):
                    places.append(f"file {rel}")
            except OSError:
                continue
    places += [name for name, content in stores.items() if _said(text_pattern, content, HEX_CHARS)]
    places += [f"output of `{command}`" for command, out in outputs.items() if _said(text_pattern, out, HEX_CHARS)]
    return places


HEX_CHARS = frozenset("0123456789abcdefABCDEF")
HEX_BYTES = frozenset(map(ord, HEX_CHARS))
HASH_RUN = 32   # the shortest hex run taken for a hash (md5 32, git 40, sha-256 64)
DECIMAL_CHARS = frozenset("0123456789")
DECIMAL_BYTES = frozenset(map(ord, DECIMAL_CHARS))


# The shortest run of decimal digits taken for a clock reading: git writes each commit's Unix
# time (1796558214) in its log and object, and "5821" was found there once the wall clock
# reached 11:56:50 (batch 2 tune, b2-a-022).
CLOCK_RUN = 10


# A UUID ("1355821a-bfce-4eb7-9fdb-00133ac9505e"): LanceDB names its transaction files with
# one, and its dashes cut the hex run short of HASH_RUN ("5821" was found in one, batch 2 tune's
# b2-a-022, offline, in one run of two).
# (`_UUID` is also the hygiene check's: a session named by its export's id.)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_UUID_BYTES = re.compile(_UUID.pattern.encode(), re.IGNORECASE)


def _said(pattern, haystack, hex_digits) -> bool:
    """Whether `pattern` occurs in `haystack` other than as part of a longer hex run (a hash),
    a UUID, or a longer run of decimal digits of a clock reading's length."""
    decimal = DECIMAL_CHARS if isinstance(haystack, str) else DECIMAL_BYTES
    uuid = _UUID if isinstance(haystack, str) else _UUID_BYTES
    for m in pattern.finditer(haystack):
        if _run(haystack, m, hex_digits) >= HASH_RUN or _run(haystack, m, decimal) >= CLOCK_RUN:
            continue
        near = uuid.finditer(haystack, max(0, m.start() - 36), m.end() + 36)
        if any(u.start() <= m.start() and m.end() <= u.end() for u in near):
            continue
        return True
    return False


def _run(haystack, m, digits) -> int:
    """The length of the run of `digits` around match `m`, when it is longer than the match (else 0)."""
    start, end = m.start(), m.end()
    while start > 0 and haystack[start - 1] in digits:
        start -= 1
    while end < len(haystack) and haystack[end] in digits:
        end += 1
    return end - start if end - start > m.end() - m.start() else 0


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
_FENCE = re.compile(r"(?<!\\)```")


def content_words(text: str) -> int:
    """Words that are not STOPWORDS; links and `[REDACTED:kind]` markers do not count.
    Chinese has no spaces: a run of Han characters counts one word per two characters."""
    text = re.sub(r"\[\[[^\]]*\]\]|\[REDACTED:[^\]]*\]", " ", text)
    han = sum((len(run) + 1) // 2 for run in _HAN.findall(text))
    latin = [w for w in _WORD.findall(_HAN.sub(" ", text)) if w.lower() not in STOPWORDS]
    return han + len(latin)


# An unresolved reference: an active memory note whose statement leans on context it does
# not carry ("The user will try that.", "She's 68 and still…", "用户会试试那个。"). The rules
# read the statement once its attributions are taken off ("On <date>, ", "In the week of
# <date>, ", "According to X, ", "X说：", "<date>，"); each is conservative: a flag should be
# a fragment anyone would see.
# 1. It starts with a third-person pronoun (he, she, they, him, her, his, them, their; 他, 她,
#    它 and their plurals), or with a demonstrative standing for a thing: that/this/it/these/
#    those + a verb ("that looks great"), 这个/那个/这样/那样/这些/那些 + a verb, an adverb or
#    punctuation ("这个不错"), 这是/那是. Nothing comes before it to say who or what it is. An
#    anticipatory or empty "it" ("It is important to the user that…", "It's the user's
#    first week at Orrin") is not flagged.
# 2. A clause ends on a bare object (that, this, these, those, it, them, him, her, there;
#    这个, 那个, 这些, 那些, 这样, 那样, 它) with no antecedent before it in the statement.
#    English antecedent: a name (a capitalised word not opening a sentence), a number, or a
#    determiner or possessive + a word, "the user" aside ("the photos", "a cabin", "Noor's
#    car"), or what an exception names ("anything except eggplant, can't stand it"). Chinese has no cheap noun test: a clause-final demonstrative is always flagged, 它
#    only with at most 3 Han characters before it (用户 and 等人 not counted). "all of it"
#    is an idiom, not a reference.
# 3. Chinese: 他/她/它 anywhere with at most 3 Han characters before it, counted the same way
#    ("用户想先给他转两万块红包"; 其他, 吉他 and 他人 are not pronouns), and 把 + a bare
#    demonstrative + a verb ("用户把这个发给…").
# 4. It ends on an ellipsis ("…", "...") and a clause of its last sentence starts with a
#    pronoun or demonstrative ("…68 and she's still…"): cut off mid-thought.
# Not flagged: a pronoun followed by more words ("likes it when…", "put it in the fire
# safe"), or with an antecedent before it ("Priya lives in Leeds and she visits"). Missed on
# purpose: a pronoun with some noun before it that is not what it means ("用户女儿糖糖天天
# 偷偷喂它零食", the dog): read the notes, the count is a floor.
_EN_PERSONAL = r"(?:he|she|they|him|her|his|them|their|theirs)(?:['’](?:s|re|ve|ll|d))?"
_EN_THING = r"(?:it|that|this|these|those)"
_EN_VERBS = r"""(?:['’]s|['’]ll|['’]d|is|was|are|were|will|would|should|could|can|might|must|
    may|does|did|do|doesn['’]t|didn['’]t|isn['’]t|wasn['’]t|has|had|looks|looked|sounds|sounded|
    seems|seemed|works|worked|feels|felt|makes|made|means|meant|goes|went|costs|cost|takes|took|
    needs|needed|helps|helped|says|said|gets|got)"""
_EN_ANTICIPATORY = re.compile(r"\b(?:to|that|when|if|whether|how)\b", re.IGNORECASE)
_EN_IT_IS_A = re.compile(r"it\s*(?:['’]s|is|was)\s+(?:the|a|an|my|his|her|their|our|its)\b",
                         re.IGNORECASE)
_EN_LEADING = re.compile(rf"(?:{_EN_PERSONAL}\b|{_EN_THING}\s*{_EN_VERBS}\b)",
                         re.IGNORECASE | re.VERBOSE)
_EN_OBJECT = re.compile(r"(?<!\ball of )\b(that|this|these|those|it|them|him|her|there)\s*"
                        r"(?=[.,;:!?…)]|$)", re.IGNORECASE)
_EN_DETERMINER = re.compile(r"""\b(?:a|an|the|this|that|these|those|his|her|their|its|my|our|
    your|some|any|each|every|another|both|which)\s+(?!user\b|others?\b)[^\W\d_]|['’]s\s+[^\W\d_]
    |\b(?:except|besides|apart\s+from|other\s+than)\s+[^\W\d_]|\d""", re.IGNORECASE | re.VERBOSE)
_EN_NOT_NAMES = frozenset({"I", "User", "The", "On", "According", "As"})
_ZH_DEMONSTRATIVE = "这个|那个|这些|那些|这样|那样"
_ZH_PUNCT = "，。！？；：、,.!?;:…)）"
_ZH_LEADING = re.compile(rf"(?:他|她|它|这是|那是|(?:{_ZH_DEMONSTRATIVE})"
                         rf"(?=$|[{_ZH_PUNCT}是不很挺太真好也还就可都会能要没别先再]))")
_ZH_OBJECT = re.compile(rf"({_ZH_DEMONSTRATIVE}|它们|它)(?=$|[{_ZH_PUNCT}])")
_ZH_PERSON = re.compile(r"(?<![其吉])(他|她|它)(?!人)")
_ZH_BA = re.compile(rf"把(?:{_ZH_DEMONSTRATIVE}|它)"
                    r"(?:发|给|拿|放|寄|转|带|交|留|扔|写|改|存|删|加|用|告诉|做)")
_ELLIPSIS = re.compile(r"(?:…|\.\.\.)\s*$")
_SENTENCE_END = re.compile(r"[.!?。！？]\s*")
_CLAUSE_BREAK = re.compile(r"[,;:，；：]|\b(?:and|but)\b")
_CUT_PRONOUN = re.compile(rf"(?:{_EN_PERSONAL}|{_EN_THING}(?:['’]s)?)\b|他|她|它|这个|那个",
                          re.IGNORECASE)
_ATTRIBUTION = re.compile(r"""^(?:(?:on|in\s+the\s+week\s+(?:of|after|before))\s+
    \d{4}-\d{2}-\d{2}\s*,\s*|according\s+to\s+[^,]{1,40},\s*
    |\d{4}-\d{2}-\d{2}\s*[，,]\s*|[^：:，,。\s]{1,12}说\s*[：:]\s*
    |据[^，,。]{1,12}(?:说|称)\s*[，,]\s*)""", re.IGNORECASE | re.VERBOSE)


def _core(statement: str) -> str:
    """The statement with links shown as their text and leading attributions taken off."""
    text = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", statement).strip()
    while (match := _ATTRIBUTION.match(text)) and match.end() < len(text):
        text = text[match.end():]
    return text


def _en_antecedent(before: str) -> bool:
    if _EN_DETERMINER.search(before):
        return True
    words = re.findall(r"(?<![.!?:])\s+([A-Z][\w'’-]*)", before)
    return any(w.rstrip("'’s") not in _EN_NOT_NAMES for w in words)


def _zh_context(before: str) -> int:
    """Han characters before a Chinese pronoun, 用户 and 等人 not counted."""
    return sum(map(len, _HAN.findall(before.replace("用户", "").replace("等人", ""))))


def unresolved_reference(statement: str) -> str | None:
    """Why a memory note's statement is not self-contained (a pronoun or demonstrative that
    nothing in the note resolves), or None. The rules are in the comment above."""
    text = _core(statement)
    if match := _EN_LEADING.match(text):
        anticipatory = _EN_ANTICIPATORY.search(text, match.end()) or _EN_IT_IS_A.match(text)
        if not (match.group().lower().startswith("it") and anticipatory):
            return f"starts with {match.group().strip()!r}"
    if match := _ZH_LEADING.match(text):
        return f"starts with {match.group()!r}"
    for match in _EN_OBJECT.finditer(text):
        if not _en_antecedent(text[:match.start()]):
            return f"bare {match.group(1)!r} ends a clause"
    for match in _ZH_OBJECT.finditer(text):
        if not match.group(1).startswith("它") or _zh_context(text[:match.start()]) <= 3:
            return f"bare {match.group(1)!r} ends a clause"
    for match in _ZH_PERSON.finditer(text):
        if _zh_context(text[:match.start()]) <= 3:
            return f"{match.group(1)!r} with nothing before it to refer to"
    if match := _ZH_BA.search(text):
        return f"bare object in {match.group()!r}"
    if _ELLIPSIS.search(text):
        sentence = _SENTENCE_END.split(_ELLIPSIS.sub("", text))[-1]
        for clause in _CLAUSE_BREAK.split(sentence):
            if _CUT_PRONOUN.match(clause.strip()):
                return f"cut off after {clause.strip()!r}"
    return None


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


# --- what a reader sees (issue 33) ----------------------------------------------------------
# Written from the examples of notes a person would not have written, not from the
# extractor's rules, so that the count can show what the rules miss.

# A statement that opens with the talk around a fact.
_FILLER_OPENER = re.compile(
    r"^(?:(?:so|oh|ok(?:ay)?|well|yeah|yes|nah|no|hey|hi|ugh|lol|haha\w*|honestly|anyway|also|btw|"
    r"by the way|fun fact|quick (?:one|question|update)|(?:the )?(?:other )?(?:big|good|bad|great) news|"
    r"on the (?:bright|plus|other) side|important one|update|side note|guess what|according to the user|"
    r"\w+-wise)\b[\s,.!:;—–-]"
    r"|跟你说|和你说|我跟你说|说个事|告诉你|对了|哈哈|嗯|哦|啊|挺好的|要的|好的|好吧|那个|话说|其实吧|不过)", re.I)
# "I" swapped for "the user" leaves the verb of "I": "The user need help", "The user have".
_BAD_AGREEMENT = re.compile(
    r"\bThe user (?:need|have|are|were|do|don't|go|want|like|live|work|think|feel|love|hate|get|make|"
    r"was going|am)\b|\bthe user and others (?:is|was|has)\b|用户是说用户|用户跟你说|用户告诉你", re.I)
# A request to the assistant written down as if it were a fact about the person.
_REQUEST = re.compile(
    r"\b(?:can|could|would) you\b|\bhelp (?:the user|me|them) (?:with|write|plan|find|pick|draft|choose|make|"
    r"come up|figure|think)|\bthe user (?:needs?|will need|wants?|would like) (?:help|a (?:toast|list|plan|draft|reply|name|"
    r"dinner place|recipe|caption|message|email|suggestion))|^(?:please )?(?:write|draft|give|suggest|recommend|"
    r"list|make|help)\b|帮用户|帮我|给用户写|替用户|请你|你能不能|你帮", re.I)
# The talk of a correction left in the note that states the corrected value.
_CORRECTION_TALK = re.compile(
    r"\b(?:not|n't) \w+,? (?:I|the user) meant\b|\bsorry,? (?:I|the user) meant\b|\bI mean\b|"
    r"\b(?:typo|misspel\w*|autocorrect)\b|[，,]\s*不是[\u4e00-\u9fff]{1,4}的[\u4e00-\u9fff](?=[，。,.!！]|$)|打错(?:字)?了|说错了|输入法|"
    r"([\u4e00-\u9fff])[\u4e00-\u9fff]的\1|"
    r"[\u4e00-\u9fff]{1,3}的[\u4e00-\u9fff]，不是", re.I)
LONG_TITLE = 60  # characters
# An entity hub named by a piece of a sentence rather than a name. A title-cased name that opens
# with an article is a name ("The Silent Patient", "The Pier"); "the bakery", "The best one" are not.
_FRAGMENT_HUB = re.compile(
    r"\b(?-i:here|there|in|at|on|of|the|a|an|my|our|and|with|for|to|is|was)\s*$|"
    r"\s(?:here|there) in\b|^(?-i:the|a|an|my|our|this|that)\s|^(?-i:The|A|An|My|Our|This|That)\s+(?-i:[a-z])|"
    r"的一家|一家|这家|那家|的$|了$|^(?:在|去|到|从)|[，,。]", re.I)
_COMMON_HUBS = frozenset({"mountain", "mountains", "christmas", "beach", "park", "office", "school", "work",
                          "home", "gym", "weekend", "summer", "winter", "spring", "autumn", "fall"})


def reader_reasons(note: VaultNote) -> dict[str, str]:
    """The reader checks (`READER_CHECKS`) an active memory note or an entity hub fails, each
    with why."""
    out = {}
    if note.is_active_memory:
        text = note.statement.strip()
        if m := _FILLER_OPENER.search(text):
            out["filler_openers"] = f"opens with {m.group(0).strip()!r}"
        if m := _BAD_AGREEMENT.search(text):
            out["bad_agreement"] = repr(m.group(0))
        if note.type != "procedure" and (m := _REQUEST.search(text)):  # "以后都帮用户换算成人民币" is standing
            out["requests"] = repr(m.group(0))
        if m := _CORRECTION_TALK.search(text):
            out["correction_talk"] = repr(m.group(0))
        if len(note.stem) > LONG_TITLE:
            out["long_titles"] = f"{len(note.stem)} characters"
    elif note.type == "entity":
        name = note.stem
        if fragment_hub(name):
            out["fragment_hubs"] = "a piece of a sentence or a common word, not a name"
    return out


# The short words a title keeps in lower case ("The Priory of the Orange Tree").
_TITLE_SMALL = frozenset("a an and at by for from in of on or the to with".split())


def fragment_hub(name: str) -> bool:
    """Whether an entity hub's name is a piece of a sentence or a common word, not a name. A
    name in title case is a name however long, and after a lower-case "the" too ("The Priory
    of the Orange Tree", "the Loop", "the Bronx"); "the bakery", "The best one" are not."""
    words = name.split()
    titled = len(words) > 1 and all(w[:1].isupper() or w in _TITLE_SMALL for w in words[1:]) \
        and any(w[:1].isupper() for w in words[1:])
    if titled and (words[0][:1].isupper() or words[0] == "the") and not re.search(r"[，,。]", name):
        return False
    return bool(_FRAGMENT_HUB.search(name) or name.lower() in _COMMON_HUBS or len(words) > 4
                or (re.search(r"[\u4e00-\u9fff]", name) and len(name) > 8))


READER_CHECKS = ("filler_openers", "bad_agreement", "requests", "correction_talk", "long_titles",
                 "fragment_hubs")
HYGIENE_CHECKS = ("unresolved_references", "short_memories", "junk_entities", "uuid_sessions",
                  "broken_fences", *READER_CHECKS)


def hygiene(notes: list[VaultNote]) -> dict[str, list[str]]:
    """Flagged notes per check (`HYGIENE_CHECKS`), each a list of `"path (why)"`. A memory
    note may be in both `unresolved_references` and `short_memories`; `not_self_contained`
    counts it once."""
    found = {check: [] for check in HYGIENE_CHECKS}
    for note in notes:
        if note.is_active_memory:
            if why := unresolved_reference(note.statement):
                found["unresolved_references"].append(
                    f"{note.rel} ({why}: {note.statement[:60]!r})")
            if content_words(note.statement) < 4:
                found["short_memories"].append(f"{note.rel} ({note.statement[:60]!r})")
            for check, why in reader_reasons(note).items():
                found[check].append(f"{note.rel} ({why}: {note.statement[:60]!r})")
        elif note.type == "entity":
            if why := junk_entity_reason(note.stem):
                found["junk_entities"].append(f"{note.rel} ({why})")
            for check, why in reader_reasons(note).items():
                found[check].append(f"{note.rel} ({why})")
        elif note.type == "session":
            if _UUID.search(note.stem):
                found["uuid_sessions"].append(note.rel)
            if why := broken_fence_reason(note.body):
                found["broken_fences"].append(f"{note.rel} ({why})")
    return found


def not_self_contained(found: dict[str, list[str]]) -> int:
    """Memory notes with an unresolved reference or fewer than 4 content words, each counted
    once (the first figure of issue 16's hygiene line)."""
    return len({_path_of(item) for check in ("unresolved_references", "short_memories")
                for item in found.get(check, [])})


def _path_of(item: str) -> str:
    return item[:item.index(".md") + 3] if ".md" in item else item
