"""vaultmem/store/note.py: parse and render memory notes (SPEC §3) without losing what the user wrote."""

import re
from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.errors import NoteParseError
from vaultmem.memory.memories import update_note
from vaultmem.store.init import init_vault
from vaultmem.store.limits import MAX_NOTE_BYTES
from vaultmem.store.note import (
    Note,
    content_hash,
    parse_note,
    parse_note_bytes,
    read_note,
    render_note,
    split_frontmatter,
)
from vaultmem.store.properties import _scan_scalars, read_head, read_properties
from vaultmem.store.values import as_date, as_datetime, clean_tag, link, link_target, new_memory_meta, validate_memory
from vaultmem.store.vault import Vault

VALID = """\
---
id: 01JDQ7ZK3M8X2V4N6P9R0S1T2U
type: preference
created: 2026-11-29T10:30:00
updated: 2026-11-29T10:30:00
valid_from: 2026-11-29
status: active
importance: 0.8
user: default
tags:
  - vaultmem/preference
entities:
  - "[[Coffee]]"
sources:
  - "[[Sessions/2026-11-29 chat-3f2a#^m-12]]"
source_messages:
  - m-12
---
The user is cutting back on coffee and wants to drink less.
"""

# Each text must come back byte for byte from parse -> render.
ROUND_TRIPS = {
    "spec example": VALID,
    "comments and unknown keys": (
        "---\n# written by me\nid: A1\ntype: fact  # inline comment\nmood: calm\n"
        "nested:\n  a: 1\n  b: [x, y]\n# closing comment\n---\nBody\n"),
    "lists at column 0": "---\nid: A1\ntags:\n- a\n- b\nentities:\n- \"[[X]]\"\n---\nBody\n",
    "lists indented": "---\nid: A1\ntags:\n  - a\n  - b\n---\nBody\n",
    "flow list kept": "---\nid: A1\ntags: [a, b]\n---\nBody\n",
    "crlf": "---\r\nid: A1\r\ntags:\r\n  - a\r\n---\r\nLine one\r\n\r\nLine two\r\n",
    "bom": "\ufeff---\nid: A1\n---\nBody\n",
    "bom and crlf": "\ufeff---\r\nid: A1\r\n---\r\nBody\r\n",
    "chinese": "---\nid: A1\n别名: 乌龙茶\ntags:\n  - 茶\n---\n用户喜欢喝乌龙茶，尤其是冬天。\n",
    "quotes kept": "---\nid: 'A1'\nnote: \"double\"\nplain: yes\n---\nx\n",
    "blank line in frontmatter": "---\nid: A1\n\nfoo: bar\n---\nx\n",
    "space date-time kept": "---\nid: A1\ncreated: 2026-11-29 10:30:00\n---\nx\n",
    "offset date-time kept": "---\nid: A1\ncreated: 2026-11-29T10:30:00+01:00\n---\nx\n",
    "long value not folded": "---\nid: A1\ndesc: " + "word " * 80 + "end\n---\nx\n",
    "empty properties as obsidian writes them": "---\nid: A1\naliases:\ntags:\n---\nx\n",
    "block scalars": "---\nid: A1\ndesc: |\n  line one\n  line two\nfold: >\n  folded\n---\nx\n",
    "comments inside a list": "---\nid: A1\nlist:\n  - a  # c1\n  # c2\n  - b\n---\nx\n",
    "numbers as written": "---\nid: 01234\nnum: 007\nhex: 0x1F\nf: 1.50\n---\nx\n",
    "no frontmatter": "# Just a note\n\nSome text.\n",
    "empty frontmatter": "---\n---\nBody\n",
    "body with a rule line": "---\nid: A1\n---\nabove\n---\nbelow\n",
}


@pytest.mark.parametrize("text", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_parse_then_render_returns_the_same_text(text):
    assert render_note(parse_note(text)) == text


def test_null_spellings_render_as_obsidians_empty_property():
    note = parse_note("---\nid: A1\nb: ~\nc: null\n---\nx\n")
    note.meta["d"] = None
    assert render_note(note) == "---\nid: A1\nb:\nc:\nd:\n---\nx\n"


def test_spec_example_parses_to_typed_values():
    note = parse_note(VALID, "Memory/Preferences/Cutting back on coffee.md")
    assert note.id == "01JDQ7ZK3M8X2V4N6P9R0S1T2U"
    assert note.type == "preference" and note.status == "active" and note.user == "default"
    assert note.title == "Cutting back on coffee"
    assert note.meta["created"] == datetime(2026, 11, 29, 10, 30)
    assert note.meta["valid_from"] == date(2026, 11, 29)
    assert note.meta["importance"] == 0.8
    assert list(note.meta["entities"]) == ["[[Coffee]]"]
    assert note.body == "The user is cutting back on coffee and wants to drink less.\n"
    assert validate_memory(note) == []


def changed_lines(before: str, after: str) -> tuple[set, set]:
    old, new = before.splitlines(), after.splitlines()
    return set(old) - set(new), set(new) - set(old)


def test_update_keeps_unknown_keys_order_comments_and_body():
    text = ("---\n# my own header comment\nid: A1\ntype: fact\nmood: calm  # why I care\n"
            "created: 2026-11-29T10:30:00\nupdated: 2026-11-29T10:30:00\nstatus: active\n"
            "user: default\ncustom:\n  - one\n  - two\nlast_key: 3\n---\n"
            "# Heading\n\nThe body *as I wrote it*.\n\n- a list\n")
    note = parse_note(text)
    note.meta["updated"] = datetime(2026, 11, 30, 8, 0, 0)
    note.meta["status"] = "superseded"
    out = render_note(note)
    removed, added = changed_lines(text, out)
    assert removed == {"updated: 2026-11-29T10:30:00", "status: active"}
    assert added == {"updated: 2026-11-30T08:00:00", "status: superseded"}
    assert out.splitlines()[:3] == ["---", "# my own header comment", "id: A1"]
    assert out.endswith("---\n# Heading\n\nThe body *as I wrote it*.\n\n- a list\n")
    assert list(parse_note(out).meta) == list(note.meta)


@pytest.mark.parametrize("text", [
    "---\na:\n k0:\n\n\t:\n---\nbody\n",   # the case the fuzz sweep met
    "---\nid: A1\nparent:\n child:\n\n\t:\n---\nbody\n",
])
def test_a_block_ending_in_whitespace_keeps_its_closing_line(text):
    # ruamel gives back a trailing blank line's tab as it read it, with no newline after it:
    # the closing line came out as "\t---", and the note no longer had frontmatter.
    out = render_note(parse_note(text))
    assert "\n---\nbody\n" in out and "\t---" not in out
    assert render_note(parse_note(out)) == out


@pytest.mark.parametrize("indent", ["", "  "], ids=["column 0", "indented"])
def test_a_new_list_follows_the_notes_own_list_style(indent):
    text = f"---\nid: A1\ntags:\n{indent}- a\n---\nx\n"
    note = parse_note(text)
    note.meta["entities"] = [link("Coffee")]
    out = render_note(note)
    assert f"tags:\n{indent}- a\nentities:\n{indent}- \"[[Coffee]]\"\n" in out


def test_crlf_and_bom_survive_an_update():
    text = "\ufeff---\r\nid: A1\r\nstatus: active\r\n---\r\nLine one\r\nLine two\r\n"
    note = parse_note(text)
    assert note.bom and note.newline == "\r\n"
    assert note.body == "Line one\nLine two\n"  # one newline style inside the program
    note.meta["status"] = "archived"
    assert render_note(note) == text.replace("active", "archived")


def test_chinese_values_and_body_survive_an_update():
    text = "---\nid: A1\ntype: preference\n备注: 用户自己写的\n---\n用户最近在戒咖啡，每天最多喝一杯。\n"
    note = parse_note(text)
    note.meta["type"] = "fact"
    out = render_note(note)
    assert out == text.replace("preference", "fact")
    assert parse_note(out).meta["备注"] == "用户自己写的"


def test_new_date_times_render_in_obsidians_form_without_offset_or_fraction():
    from datetime import timedelta, timezone

    note = parse_note("---\nid: A1\n---\n")
    note.meta["updated"] = datetime(2026, 11, 30, 8, 1, 2, 345678, tzinfo=timezone(timedelta(hours=2)))
    note.meta["valid_from"] = date(2026, 12, 5)
    out = render_note(note)
    assert "updated: 2026-11-30T08:01:02\n" in out
    assert "valid_from: 2026-12-05\n" in out


def test_new_memory_meta_renders_as_obsidian_properties():
    meta = new_memory_meta(
        id="01JDQ7ZK3M8X2V4N6P9R0S1T2U", type="preference", created=datetime(2026, 11, 29, 10, 30),
        user="default", importance=0.8, tags=["#health", "two words"], entities=["Coffee"],
        sources=["Sessions/2026-11-29 chat-3f2a#^m-12"], source_messages=["m-12"],
        valid_from=date(2026, 11, 29))
    note = parse_note("---\n---\n")
    note.meta, note.body = meta, "The user is cutting back on coffee.\n"
    assert render_note(note) == """\
---
id: 01JDQ7ZK3M8X2V4N6P9R0S1T2U
type: preference
created: 2026-11-29T10:30:00
updated: 2026-11-29T10:30:00
valid_from: 2026-11-29
status: active
importance: 0.8
user: default
tags:
  - vaultmem/preference
  - health
  - two-words
entities:
  - "[[Coffee]]"
sources:
  - "[[Sessions/2026-11-29 chat-3f2a#^m-12]]"
source_messages:
  - m-12
---
The user is cutting back on coffee.
"""
    assert validate_memory(parse_note(render_note(note))) == []


AMBIGUOUS = ["no", "No", "NO", "yes", "on", "off", "y", "n", "N", "true", "False", "null", "Null", "~", "",
             "1.0", "1e3", "0x1f", "0o17", "017", "1_000", "+1", "-.inf", ".NaN", "12:30", "2026-11-29",
             "2026-11-29 10:30:00", "=", "<<", "42"]


def frontmatter_by_pyyaml(text: str) -> dict:
    import yaml

    return yaml.safe_load(split_frontmatter(text)[0])


@pytest.mark.parametrize("value", AMBIGUOUS)
def test_a_string_value_yaml_would_read_as_another_type_is_quoted(value):
    """One YAML type per key across the vault: `value: no` must be the string "no" for YAML
    1.1 readers (PyYAML, Obsidian's) as for YAML 1.2 (ruamel), in every note."""
    meta = new_memory_meta(id="A1", type="fact", created=datetime(2026, 11, 29, 10, 30), user="default",
                           source_messages=[value or "m-1"], extra={"attribute": "peanuts", "value": value})
    text = render_note(Note(meta=meta, body="The user avoids peanuts.\n"))
    assert frontmatter_by_pyyaml(text)["value"] == value
    assert frontmatter_by_pyyaml(text)["source_messages"] == [value or "m-1"]
    assert parse_note(text).meta["value"] == value
    assert read_properties(text)[0]["value"] == value  # the fast reader: strings as written


def test_value_no_is_the_string_no_and_typed_keys_keep_their_types():
    meta = new_memory_meta(id="A1", type="preference", created=datetime(2026, 11, 29, 10, 30), user="no",
                           importance=0.9, valid_from=date(2026, 11, 29), extra={"value": "no"})
    note = parse_note("---\n---\n")
    note.meta, note.body = meta, "The user does not eat peanuts.\n"
    text = render_note(note)
    assert "value: 'no'\n" in text and "user: 'no'\n" in text
    loaded = frontmatter_by_pyyaml(text)
    assert isinstance(loaded["value"], str) and loaded["value"] == "no"
    assert loaded["created"] == datetime(2026, 11, 29, 10, 30) and loaded["valid_from"] == date(2026, 11, 29)
    assert loaded["importance"] == 0.9 and loaded["status"] == "active"
    assert "created: 2026-11-29T10:30:00\n" in text and "importance: 0.9\n" in text


def test_a_users_unquoted_values_stay_as_written_and_values_vaultmem_sets_are_quoted():
    text = "---\nid: A1\nvalue: no\nreviewed: yes  # mine\nwhen: 12:30\nlist:\n  - on\n---\nBody\n"
    note = parse_note(text)
    assert render_note(note) == text
    note.meta["status"] = "active"
    assert render_note(note) == text.replace("---\nBody", "status: active\n---\nBody")
    note.meta["value"] = "yes"  # vaultmem changes the user's value: it is written quoted
    note.meta["list"].append("off")
    out = render_note(note)
    assert "value: 'yes'\nreviewed: yes  # mine\nwhen: 12:30\nlist:\n  - on\n  - 'off'\n" in out
    assert frontmatter_by_pyyaml(out)["value"] == "yes"


@settings(max_examples=80, deadline=None)
@given(value=st.one_of(st.sampled_from(AMBIGUOUS),
                       st.text(st.sampled_from("0123456789.:-+_eExXoObBnNyY~ abc"), max_size=12)))
def test_any_string_value_reads_back_a_string_in_yaml_1_1_and_1_2(value):
    note = parse_note("---\nid: A1\n---\n")
    note.meta["value"] = value
    text = render_note(note)
    assert frontmatter_by_pyyaml(text)["value"] == value
    assert parse_note(text).meta["value"] == value


@settings(max_examples=60, deadline=None)
@given(body=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r")),
       value=st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=0, max_size=40),
       crlf=st.booleans(), bom=st.booleans())
def test_any_body_and_value_survive_render_then_parse(body, value, crlf, bom):
    note = parse_note("---\nid: A1\n---\n")
    note.meta["text"] = value
    note.body = body
    note.newline = "\r\n" if crlf else "\n"
    note.bom = bom
    again = parse_note(render_note(note))
    assert again.meta["text"] == value
    assert again.body == body
    assert (again.newline == "\r\n") == (crlf and "\n" in render_note(note))


BAD_FILES = {
    "malformed yaml": (b"---\nid: [unclosed\ntype: fact\n---\nx\n", "invalid YAML frontmatter at line"),
    "tab indentation": (b"---\nid: a\n\tfoo: b\n---\nx\n", "line 3"),
    "duplicate key": (b"---\nid: a\nid: b\n---\nx\n", "duplicate key"),
    "no closing fence": (b"---\nid: a\nbody text\n", "no closing '---'"),
    "list instead of mapping": (b"---\n- a\n- b\n---\n", "not a mapping"),
    "scalar instead of mapping": (b"---\njust text\n---\n", "not a mapping"),
    "latin-1": ("---\nid: café\n---\n".encode("latin-1"), "not UTF-8"),
    "utf-16": ("---\nid: a\n---\n".encode("utf-16"), "UTF-16"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
    "empty": (b"", "empty"),
    "only whitespace": (b" \n\n\t\n", "empty"),
}


@pytest.mark.parametrize("data,reason", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_unreadable_notes_are_reported_with_path_and_reason(tmp_path, data, reason):
    path = tmp_path / "Broken note.md"
    path.write_bytes(data)
    with pytest.raises(NoteParseError) as caught:
        read_note(path)
    assert caught.value.path == str(path)
    assert reason in caught.value.reason
    assert str(path) in str(caught.value)


def test_a_directory_named_like_a_note_is_reported(tmp_path):
    (tmp_path / "x.md").mkdir()
    with pytest.raises(NoteParseError, match="is a directory"):
        read_note(tmp_path / "x.md")


def test_missing_file_is_reported(tmp_path):
    with pytest.raises(NoteParseError, match="no longer exists"):
        read_note(tmp_path / "gone.md")


def test_oversized_note_is_refused_before_parsing():
    with pytest.raises(NoteParseError, match=f"over the {MAX_NOTE_BYTES // 1024 // 1024} MB limit"):
        parse_note_bytes(b"---\nid: a\n---\n" + b"x" * MAX_NOTE_BYTES, "big.md")


@pytest.mark.parametrize("data", [v[0] for v in BAD_FILES.values()], ids=list(BAD_FILES))
def test_an_update_never_rewrites_a_note_it_cannot_parse(tmp_path, data):
    init_vault(tmp_path)
    vault = Vault(tmp_path)
    path = vault.folder_for("fact") / "Broken.md"
    path.write_bytes(data)
    before = path.stat()
    with pytest.raises(NoteParseError):
        update_note(vault, path, {"status": "archived"})
    assert path.read_bytes() == data
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in path.parent.iterdir()) == ["Broken.md"]  # no temp file left


def problems_for(**changes) -> list[str]:
    note = parse_note(VALID)
    for key, value in changes.items():
        if value is None:
            del note.meta[key]
        else:
            note.meta[key] = value
    return validate_memory(parse_note(render_note(note)))


@pytest.mark.parametrize("key", ["id", "type", "created", "updated", "status", "user"])
def test_validate_names_each_missing_required_property(key):
    assert problems_for(**{key: None}) == [f"missing required property '{key}'"]


@pytest.mark.parametrize("changes,expected", [
    ({"type": "opinion"}, "type 'opinion' is not one of"),
    ({"status": "deleted"}, "status 'deleted' is not one of"),
    ({"created": "last tuesday"}, "'created' is not a date-time"),
    ({"valid_from": "soon"}, "'valid_from' is not a date"),
    ({"importance": 1.5}, "'importance' must be a number from 0 to 1"),
    ({"importance": "high"}, "'importance' must be a number from 0 to 1"),
    ({"importance": True}, "'importance' must be a number from 0 to 1"),
    ({"confidence": 2}, "'confidence' must be a number from 0 to 1"),
    ({"tags": ["two words"]}, "tag 'two words' has spaces"),
    ({"tags": ["#hash"]}, "tag '#hash' has spaces"),
    ({"entities": ["Coffee"]}, "'entities' value 'Coffee' is not a [[wikilink]]"),
], ids=lambda v: str(v)[:30])
def test_validate_reports_each_broken_rule(changes, expected):
    problems = problems_for(**changes)
    assert len(problems) == 1 and problems[0].startswith(expected), problems


@pytest.mark.parametrize("value", ["2026-11-29T10:30:00+01:00", "2026-11-29T10:30:00Z"])
def test_validate_flags_a_date_time_with_an_offset(value):
    problems = validate_memory(parse_note(VALID.replace("updated: 2026-11-29T10:30:00", f"updated: {value}")))
    assert problems == ["'updated' has a time-zone offset; Obsidian wants YYYY-MM-DDTHH:mm:ss"]


def test_validate_catches_an_unquoted_link_which_yaml_reads_as_a_nested_list():
    text = VALID.replace('  - "[[Coffee]]"', "  - [[Coffee]]")
    problems = validate_memory(parse_note(text))
    assert len(problems) == 1 and "'entities'" in problems[0] and "wikilink" in problems[0]


def test_validate_accepts_a_single_link_value_and_session_type():
    problems = problems_for(type="session", superseded_by="[[Other note]]")
    assert problems == []


def test_content_hash_changes_with_any_byte():
    assert content_hash("abc") == content_hash(b"abc")
    assert content_hash("abc") != content_hash("abc\n")
    assert len(content_hash("")) == 64


def test_small_helpers():
    assert clean_tag("#two words, here") == "two-words-here"
    assert link("Coffee") == "[[Coffee]]" and link("[[Coffee]]") == "[[Coffee]]"
    assert link_target('[[Sessions/x#^m-1|alias]]') == "Sessions/x#^m-1"
    assert as_date("2026-11-29T10:30:00") == date(2026, 11, 29)
    assert as_date("nonsense") is None and as_date(None) is None
    assert as_datetime(date(2026, 1, 2)) == datetime(2026, 1, 2)
    assert as_datetime("2026-11-29 10:30:00") == datetime(2026, 11, 29, 10, 30)


def test_statement_drops_a_leading_heading():
    note = parse_note("---\nid: A1\n---\n# Title\n\nThe statement.\n")
    assert note.statement() == "The statement."


# ---- the one frontmatter reader: split, fast properties, note heads ----------------------

# The `---` fence: the opening line, then up to the first closing line. (The regex vaultmem
# used before python-frontmatter's handler had `(.*?\n)?`, which on an empty block took the
# body up to a later `---` rule for YAML.)
_FENCE_RULE = re.compile(r"\A---[ \t]*\n(.*?\n)??---[ \t]*(?:\n|\Z)", re.DOTALL)
FENCE_LINES = st.lists(st.sampled_from(["---", "--- ", "---\t", "----", " ---", "-- -", "---x",
                                        "a: 1", "", "b:", "  - x", "# c", "...", "\ufeff---"]),
                       max_size=8)


@settings(max_examples=400, derandomize=True, deadline=None, database=None)
@given(FENCE_LINES, st.booleans(), st.text(max_size=20))
def test_split_matches_the_fence_rule(lines, final_newline, tail):
    text = "\n".join(lines) + ("\n" if final_newline else "") + tail
    fence = _FENCE_RULE.match(text)
    expected = (fence.group(1) or "", text[fence.end():]) if fence else None
    assert split_frontmatter(text) == expected


SCALARS = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=12),
    st.sampled_from(["", "x", "a: b", "a #b", "a#b", "'q'", '"q"', "'it''s'", '"a\\"b"', "[x]",
                     "&a 1", "*a", "|", ">-", "- x", "~", "null", "2026-11-29", "0.5", "x:",
                     "\t", "x\ty", "tea ", "\"[[Sessions/s#^m-1]]\"", "é"]))
PROPERTY_LINES = st.lists(st.one_of(
    st.tuples(st.sampled_from(["id", "user", "status", "value", "a.b", "x-y", "_k", "id"]), SCALARS)
    .map(lambda kv: f"{kv[0]}: {kv[1]}".rstrip() if kv[1] else f"{kv[0]}:"),
    st.sampled_from(["  - item", "- item", "  nested: 1", "# comment", "", "  # indented comment",
                     "key:value", "... ", "\tx: 1", "k :", "<<: *a", "? k"])), max_size=8)


@settings(max_examples=1000, derandomize=True, deadline=None, database=None)
@given(PROPERTY_LINES)
def test_head_scan_agrees_with_yaml_wherever_it_answers(lines):
    block = "\n".join(lines) + "\n"
    scanned = _scan_scalars(block)
    if scanned is None:
        return
    found = read_properties(f"---\n{block}---\n")  # None for an empty block: no properties
    assert scanned == ({k: v for k, v in found[0].items() if isinstance(v, str)} if found else {}), block


def test_read_head_reads_past_a_long_list_to_the_closing_line(tmp_path):
    ids = "".join(f"  - m-{i:05d}\n" for i in range(2000))  # ~24 KB, past the first read
    path = tmp_path / "Long session.md"
    path.write_bytes(("\ufeff---\r\ntype: session\r\nmessage_ids:\r\n" + ids.replace("\n", "\r\n")
                      + "session: 'chat-1'\r\nuser: ann\r\n---\r\nbody\r\n").encode())
    assert read_head(path) == {"type": "session", "session": "chat-1", "user": "ann"}


@pytest.mark.parametrize("text, expected", [
    ("---\nid: A1 # mine\nvalue: 'it''s'\nnote: |\n  two\n  lines\n---\n", {"id": "A1", "value": "it's"}),
    ("---\nid: [unclosed\n---\n", {}),
    ("no frontmatter\nid: A1\n", {}),
    ("---\nid: A1\n", {}),  # no closing line
    ("---\nid: A1\n----\n", {}),
])
def test_read_head_falls_back_to_yaml_and_is_empty_when_unreadable(tmp_path, text, expected):
    path = tmp_path / "n.md"
    path.write_text(text, encoding="utf-8")
    got = read_head(path)
    assert {k: got[k] for k in expected} == expected if expected else got == {}


def test_read_head_of_a_missing_file_or_a_folder_is_empty(tmp_path):
    assert read_head(tmp_path / "gone.md") == {} and read_head(tmp_path) == {}


def test_a_value_holding_a_yaml_line_break_character_reads_back_as_itself():
    """NEL, LS and PS are line breaks to YAML: written raw (as ruamel does), a message id "\x85"
    read back as a space (found by tests/test_fuzz.py on a Claude Code log)."""
    from vaultmem.store.note import Note, parse_note, render_note

    for odd in ("\x85", "m-\u2028", "a\u2029b"):
        note = Note(meta={"message_ids": [odd, "m-2"], "title": odd}, body="text\n")
        back = parse_note(render_note(note), "x.md")
        assert back.meta["message_ids"] == [odd, "m-2"] and back.meta["title"] == odd
