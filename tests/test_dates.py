"""Relative date expressions resolved against a session time (vaultmem/text/dates.py)."""

from datetime import date, datetime

import pytest

from vaultmem.text.dates import find_date, resolve_relative

MONDAY = datetime(2023, 5, 8, 13, 56)  # LoCoMo's first session: "1:56 pm on 8 May, 2023"


@pytest.mark.parametrize("text, expected, span, granularity", [
    ("I went to a support group yesterday", date(2023, 5, 7), "yesterday", "day"),
    ("the day before yesterday we met", date(2023, 5, 6), "the day before yesterday", "day"),
    ("tomorrow morning I fly", date(2023, 5, 9), "tomorrow morning", "day"),
    ("I ran a charity race last Saturday", date(2023, 5, 6), "last Saturday", "day"),
    ("Last week I visited", date(2023, 5, 1), "Last week", "week"),
    ("We're going camping next month", date(2023, 6, 1), "next month", "month"),
    ("I painted it last year", date(2022, 1, 1), "last year", "year"),
    ("two weeks ago I started", date(2023, 4, 24), "two weeks ago", "approx"),
    ("3 days ago", date(2023, 5, 5), "3 days ago", "day"),
    ("a few days ago", date(2023, 5, 5), "a few days ago", "approx"),
    ("in 2 weeks", date(2023, 5, 22), "in 2 weeks", "approx"),
    ("last weekend we hiked", date(2023, 5, 6), "last weekend", "weekend"),
    ("two weekends ago we camped", date(2023, 4, 29), "two weekends ago", "weekend"),
    ("I'm in Tokyo until Friday", date(2023, 5, 12), "Friday", "day"),
    ("On Saturday I went hiking", date(2023, 5, 6), "On Saturday", "day"),
    ("ten years ago for my birthday", date(2013, 1, 1), "ten years ago", "year"),
    ("on May 3 I went", date(2023, 5, 3), "on May 3", "day"),
    ("I'll go in June", date(2023, 6, 1), "in June", "month"),
    ("昨天我去了北京", date(2023, 5, 7), "昨天", "day"),
    ("明天开会", date(2023, 5, 9), "明天", "day"),
    ("上周六我们去爬山了", date(2023, 5, 6), "上周六", "day"),
    ("上周我很忙", date(2023, 5, 1), "上周", "week"),
    ("下个月我要去东京", date(2023, 6, 1), "下个月", "month"),
    ("三天前我搬家了", date(2023, 5, 5), "三天前", "day"),
    ("去年我去了日本", date(2022, 1, 1), "去年", "year"),
])
def test_expressions_resolve(text, expected, span, granularity):
    match = find_date(text, MONDAY)
    assert match is not None
    assert match.date == expected
    assert text[match.start:match.end] == span
    assert match.granularity == granularity


def test_resolve_relative_returns_date_and_span():
    day, span = resolve_relative("I went to a support group yesterday", MONDAY)
    assert day == date(2023, 5, 7)
    assert span == (26, 35)
    assert resolve_relative("No dates here, may I ask?", MONDAY) == (None, None)


def test_bare_weekday_follows_tense_or_the_preference():
    assert find_date("I'm going hiking on Saturday", MONDAY).date == date(2023, 5, 13)
    assert find_date("I went hiking on Saturday", MONDAY).date == date(2023, 5, 6)
    assert find_date("Saturday", MONDAY, prefer="past").date == date(2023, 5, 6)


def test_labels_and_phrases_in_both_languages():
    assert find_date("yesterday", MONDAY).phrase() == "On 2023-05-07"
    assert find_date("next month", MONDAY).phrase() == "In June 2023"
    assert find_date("last week", MONDAY).phrase() == "In the week before 2023-05-08"
    assert find_date("last weekend", MONDAY).phrase() == "On the weekend of 2023-05-06"
    assert find_date("two weeks ago", MONDAY).phrase() == "Around 2023-04-24"
    assert find_date("下个月", MONDAY).label("zh") == "2023年6月"
    assert find_date("上周", MONDAY).label("zh") == "2023-05-08之前的一周"


def test_a_date_anchor_works_like_a_datetime():
    assert find_date("yesterday", date(2024, 3, 1)).date == date(2024, 2, 29)


@pytest.mark.parametrize("text", ["The first cities were built about 7000 years ago.",
                                  "that was 99999999999 days ago, give or take",
                                  "in 9000 years the sun will still be here"])
def test_a_shift_past_the_calendar_is_no_date(text):
    """A LongMemEval session on history ("7000 years ago" from 2023) crashed the whole
    extraction: a span of time past the calendar's range names no day a memory holds."""
    assert find_date(text, date(2023, 5, 1)) is None


def test_a_transcript_that_talks_of_prehistory_is_extracted(tmp_path, monkeypatch, embedder):
    from tests.helpers.transcripts import write_jsonl
    from vaultmem import api

    monkeypatch.setenv("VAULTMEM_NOW", "2023-06-01T12:00:00")
    monkeypatch.delenv("VAULTMEM_VAULT", raising=False)
    monkeypatch.setattr("vaultmem.index.embed.Embedder", lambda *a, **k: embedder)
    api.init(tmp_path / "vault")
    transcript = write_jsonl(tmp_path / "history.jsonl", "history", [
        ("user", "I teach history and my class is on Mesopotamia: the first cities rose about 7000 years ago."),
        ("assistant", "Uruk is a good start.")], speaker="user")
    report = api.Memory(tmp_path / "vault", embedder=embedder).extract([transcript])
    assert report["errors"] == [] and report["session_notes"] == 1
