"""vaultmem/text/script.py: one measure of how much of a text is Chinese (or CJK), with the
denominators its four callers count by, and their edge cases (no letters, only spaces)."""

import doctest

import pytest

from vaultmem.policy.candidate import make_title
from vaultmem.text import script
from vaultmem.text.script import CJK, HAN, han_share, is_chinese, script_share, word_count


def test_module_examples_run():
    assert doctest.testmod(script).failed == 0


@pytest.mark.parametrize("among, expected", [
    ("all", 2 / 9),        # 中文 among "中文 ab 12." (9 characters)
    ("nonspace", 2 / 7),   # spaces do not count
    ("alpha", 2 / 4),      # nor digits and marks
    ("letters", 2 / 4),
])
def test_the_share_counts_by_the_denominator_asked_for(among, expected):
    assert script_share("中文 ab 12.", among=among) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "   ", "\t\n", "2026-11-29, !!"])
def test_a_text_with_nothing_to_count_has_share_zero_and_is_not_chinese(text):
    for among in ("all", "nonspace", "alpha", "letters"):
        assert script_share(text, among=among) == 0.0
    assert not is_chinese(text)


def test_han_is_the_ideograph_block_and_cjk_adds_kana_hangul_and_extension_a():
    assert script_share("ひらがな한국", among="letters", script=HAN) == 0.0
    assert script_share("ひらがな한국", among="letters", script=CJK) == 1.0
    assert script_share("㐀中", script=HAN) == 0.5 and script_share("㐀中", script=CJK) == 1.0


def test_is_chinese_takes_a_third_of_the_letters():
    assert is_chinese("中ab")                 # exactly a third
    assert not is_chinese("中abc")
    assert is_chinese("我住在上海 now") and not is_chinese("I live in Shanghai 上海")


def test_han_share_is_the_nonspace_share_and_is_cached():
    han_share.cache_clear()
    assert han_share("上海 ab") == script_share("上海 ab") == 0.5
    han_share("上海 ab")
    assert han_share.cache_info().hits == 1


def test_titles_of_chinese_text_get_half_the_room():
    # make_title measures Chinese among all the characters: a third or more halves the room.
    english = make_title("a" * 30 + " " + "b" * 30, limit=40)
    chinese = make_title("我" * 60, limit=40)
    assert len(english) > 20 and len(chinese) <= 20


@pytest.mark.parametrize("text, words", [
    ("", 0),
    ("I moved to Lisbon last month", 6),
    ("  spaced   out  — dash ", 4),                # without CJK: exactly len(text.split())
    ("我上周搬到了里斯本", 5),                        # 9 characters: half a word each, rounded up
    ("我上周搬到了里斯本 in May", 7),
    ("你好，世界！", 2),                              # full-width marks are no words
    ("ひらがな 한국어", 4),                           # kana and hangul count as CJK
    ("我" * 120, 60),                               # 120 characters read as 60 words
])
def test_word_count_counts_a_cjk_character_as_half_a_word(text, words):
    assert word_count(text) == words
