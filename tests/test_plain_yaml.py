"""vaultmem/store/plain_yaml.py: the frontmatter it writes is byte for byte what ruamel writes, or
it leaves the block to ruamel."""

import io
from datetime import date, datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString, SingleQuotedScalarString

from vaultmem.store import plain_yaml
from vaultmem.store.note import _quote_ambiguous_strings, _yaml, parse_note, render_note
from vaultmem.store.values import link, new_memory_meta

INDENTS = [(4, 2), (2, 0), (3, 1)]


def ruamel_dump(meta, seq_indent) -> str:
    buf = io.StringIO()
    _yaml(seq_indent).dump(meta, buf)
    return buf.getvalue()


def agrees(meta, seq_indent) -> bool:
    """plain_yaml's block equals ruamel's, or plain_yaml declined. Returns whether it wrote."""
    _quote_ambiguous_strings(meta)   # as render_note does first
    fast = plain_yaml.dump(meta, seq_indent)
    if fast is not None:
        assert fast == ruamel_dump(meta, seq_indent), (meta, seq_indent)
    return fast is not None


# Text from every corner ruamel treats specially: indicators, quotes, colons and hashes next
# to spaces, line breaks of every kind, BOM, tabs, non-printables, CJK, emoji, surrogates'
# neighbours, YAML's other types (`no`, `1.0`, `~`, `2026-01-02`, `12:30`).
SPECIAL = list("-?:,[]{}#&*!|>'\"%@`\\ \t\n\r\x85\u2028\u2029\ufeff\x00\x07\x7f\xa0\ud7ff\ue000\ufffd")
TRICKY_WORDS = ["no", "yes", "on", "Off", "y", "N", "~", "null", "1.0", "0x1f", "12:30", "2026-01-02",
                "2026-01-02T03:04:05", "=", "---", "...", "- x", "a: b", "a:b", "a #b", "a#b", "a:", "",
                "conv-26:s1:t3", "vaultmem/fact", "我喜欢咖啡, 很多", "it's", " lead", "trail ", ".hidden",
                "1e5", "+1", "-1", ".inf", "NaN", "0o17", "1_000", "true", "False"]
TEXT = st.one_of(
    st.text(alphabet=st.sampled_from(SPECIAL + list("ab1_./ 我咖啡😀")), max_size=12),
    st.text(max_size=16),
    st.sampled_from(TRICKY_WORDS))
# Words such as vaultmem's values are made of, each one ruamel may still quote ("a:", "1.0").
WORDS = st.builds(str.__add__, st.sampled_from(list("aZ1_我")),
                  st.text(alphabet=st.sampled_from(list("abXZ019 _-./,:#'我咖啡")), max_size=12))
SIMPLE = st.one_of(
    WORDS, WORDS.map(DoubleQuotedScalarString), WORDS.map(SingleQuotedScalarString),
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.sampled_from([0.5, 0.85, 1.0, 0.1 + 0.2, 1e-7, 3e20]),
    st.datetimes(timezones=st.sampled_from([None, timezone.utc, timezone(timedelta(hours=8))])), st.dates())
TRICKY = st.one_of(
    TEXT, TEXT.map(DoubleQuotedScalarString), TEXT.map(SingleQuotedScalarString), TEXT.map(LiteralScalarString),
    st.floats(allow_nan=True, allow_infinity=True))
SCALAR = st.one_of(SIMPLE, TRICKY)
SAFE_KEY = st.sampled_from(["id", "type", "created", "tags", "sources", "subject", "value", "值", "user_name"])
KEY = st.one_of(SAFE_KEY, st.sampled_from(["no", "1", "a b", "a: b", "~"]), TEXT)
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=3), st.dictionaries(st.sampled_from(["a", "b"]), SCALAR, max_size=2))
PROPERTIES = {
    # what vaultmem writes: known keys, words, quoted links, dates, numbers
    "vaultmem's": st.dictionaries(SAFE_KEY, st.one_of(SIMPLE, st.lists(SIMPLE, max_size=3)), min_size=1, max_size=5),
    "any": st.dictionaries(KEY, VALUE, min_size=1, max_size=4),
}


def test_generated_properties_are_written_as_ruamel_writes_them():
    """Either writer, same bytes; and the fast path is taken often enough for that to mean
    something (most of vaultmem's own properties, few of the tricky ones)."""
    wrote = {}
    for name, strategy in PROPERTIES.items():
        found = wrote[name] = []

        @settings(max_examples=500, deadline=None, derandomize=True, database=None)
        @given(strategy, st.sampled_from(INDENTS))
        def check(meta, seq_indent):
            found.append(agrees(CommentedMap(meta), seq_indent))

        check()
    assert len(wrote["any"]) == len(wrote["vaultmem's"]) == 500
    assert sum(wrote["vaultmem's"]) >= 400 and sum(wrote["any"]) >= 25, {k: sum(v) for k, v in wrote.items()}


def test_each_tricky_value_alone():
    """Every special string of TEXT's list (plain, double- and single-quoted) and every
    float ruamel spells its own way (`.inf`, `.nan`), one at a time, as a value and in a list."""
    specials = [float("inf"), float("-inf"), float("nan"), -0.0, 1e-07, 3e20, 0.1 + 0.2]
    for text in TRICKY_WORDS + SPECIAL:
        specials += [text, DoubleQuotedScalarString(text), SingleQuotedScalarString(text)]
    assert len(specials) > 100
    for value in specials:
        for seq_indent in INDENTS:
            agrees(CommentedMap(x=value), seq_indent)
            agrees(CommentedMap(x=[value, value]), seq_indent)


def test_a_new_memory_note_takes_the_fast_path_with_ruamels_bytes():
    meta = new_memory_meta(id="01JDQ7ZK3M8X2V4N6P9R0S1T2U", type="fact",
                           created=datetime(2026, 11, 29, 10, 30, 5, 123, tzinfo=timezone.utc), user="default",
                           importance=0.8, confidence=0.85, tags=["coffee", "咖啡"], entities=["Coffee", "小明"],
                           sources=["Sessions/2026-11-29 chat-3f2a#^m-12"], source_messages=["m-12", "conv-26:s1:t3"],
                           valid_from=date(2026, 11, 29), run="run-7",
                           extra={"subject": "the user", "attribute": "drink", "value": "less coffee, more tea"})
    meta["valid_to"] = None
    for seq_indent in INDENTS:
        assert agrees(meta, seq_indent), seq_indent


def test_what_it_declines_goes_to_ruamel():
    """A comment, a flow list, a nested mapping, a literal block: None, and render_note still
    writes the note as ruamel does (the comment and the flow list kept)."""
    text = ("---\nid: a1  # mine\ntype: fact\ntags: [x, y]\nnested:\n  a: 1\nbody: |\n  two\n  lines\n---\n"
            "The user likes tea.\n")
    note = parse_note(text)
    assert plain_yaml.dump(note.meta, note.seq_indent) is None
    assert render_note(note) == text
    flow = CommentedSeq(["x"])
    flow.fa.set_flow_style()
    assert plain_yaml.dump(CommentedMap(tags=flow), (4, 2)) is None
    assert plain_yaml.dump(CommentedMap(nested={"a": 1}), (4, 2)) is None
    assert plain_yaml.dump(CommentedMap(body=LiteralScalarString("a\nb")), (4, 2)) is None
    assert plain_yaml.dump(CommentedMap(link=link("a\"b")), (4, 2)) is None   # ruamel escapes the quote


def test_a_note_read_back_renders_unchanged():
    """A note vaultmem wrote, parsed again (ruamel's own value types: timestamps, quoted
    strings) renders to the same bytes whichever writer takes it."""
    meta = new_memory_meta(id="a1", type="event", created=datetime(2026, 1, 2, 3, 4, 5), user="default",
                           tags=["trip"], entities=["Porto"], valid_from=date(2026, 1, 2))
    from vaultmem.store.note import Note

    text = render_note(Note(meta=meta, body="The user went to Porto.\n"))
    again = parse_note(text)
    assert render_note(again) == text
    for key in list(again.meta):
        again.meta[key] = again.meta[key]   # ruamel's loaded types, now set as values
    assert render_note(again) == text
