"""Issue 32's blind update corpus (benchmarks/data/blind/): written by helpers who never read
the extractor, split by a hash of each case's name into a half tuned on and a half never read.
These tests keep the committed corpus usable by `memquality.py`: every case checks, the two
halves share no case and no transcript, and both cover the issue's spread (English, Chinese
and mixed; at least 20 slot families; negative updates; secrets)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from blind_corpus import check, problems_of  # noqa: E402

BATCH = ROOT / "benchmarks" / "data" / "blind" / "batch1"
BATCH2 = ROOT / "benchmarks" / "data" / "blind" / "batch2"  # written later, scored once before tuning
BATCH3 = ROOT / "benchmarks" / "data" / "blind" / "batch3"  # issue 48's fresh measure (2026-12-08)


def cases(half: str) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((BATCH / half).glob("*.json"))]


@pytest.mark.parametrize("half", ["tune", "heldout"])
def test_every_case_of_each_half_checks(half):
    assert check(BATCH / half) == []
    assert check(BATCH2 / half) == []
    assert check(BATCH3 / half) == []


def test_the_second_batch_is_disjoint_from_the_first_and_covers_the_spread():
    first = {p.name for half in ("tune", "heldout") for p in (BATCH / half).glob("*.json")}
    second = [json.loads(p.read_text(encoding="utf-8")) for half in ("tune", "heldout")
              for p in sorted((BATCH2 / half).glob("*.json"))]
    assert len(second) == 160 and not first & {c["name"] + ".json" for c in second}
    langs = Counter(c["lang"] for c in second)
    assert (langs["en"], langs["zh"], langs["mixed"]) == (68, 60, 32)
    assert len({c["family"] for c in second}) >= 20


def test_the_third_batch_is_new_and_its_halves_split_each_language():
    earlier = {p.name for batch in (BATCH, BATCH2) for half in ("tune", "heldout")
               for p in (batch / half).glob("*.json")}
    halves = {half: [json.loads(p.read_text(encoding="utf-8")) for p in sorted((BATCH3 / half).glob("*.json"))]
              for half in ("tune", "heldout")}
    names = {half: {c["name"] for c in got} for half, got in halves.items()}
    assert not names["tune"] & names["heldout"]
    assert not (names["tune"] | names["heldout"]) & {n.removesuffix(".json") for n in earlier}
    for got in halves.values():
        langs = Counter(c["lang"] for c in got)
        assert (langs["en"], langs["zh"], langs["mixed"]) == (16, 12, 12)
        kinds = Counter(p["kind"] for c in got for p in c["probes"])
        assert set(kinds) == {"memory", "no_memory", "current", "as_of", "secret"}
    assert len({c["family"] for got in halves.values() for c in got}) >= 20


def test_the_halves_are_disjoint_and_each_covers_the_spread():
    tune, heldout = cases("tune"), cases("heldout")
    assert not {c["name"] for c in tune} & {c["name"] for c in heldout}
    assert not ({p.name for p in (BATCH / "tune" / "transcripts").iterdir()}
                & {p.name for p in (BATCH / "heldout" / "transcripts").iterdir()})
    assert len(tune) + len(heldout) >= 300
    for half in (tune, heldout):
        langs = Counter(c["lang"] for c in half)
        assert min(langs["en"], langs["zh"], langs["mixed"]) >= 20, langs
        assert len({c["family"] for c in half}) >= 20
        probes = [p for c in half for p in c["probes"]]
        kinds = Counter(p["kind"] for p in probes)
        assert min(kinds.values()) >= 40 and set(kinds) == {"memory", "no_memory", "current", "as_of", "secret"}
        assert sum(bool(p.get("negative")) for p in probes) >= 20


def test_a_stale_string_in_the_turn_that_states_the_new_value_is_caught(tmp_path):
    (tmp_path / "transcripts").mkdir()
    turns = [{"session": "s1", "id": "s1-1", "time": "2026-01-05T10:00:00", "role": "user", "text": "I live in Porto"},
             {"session": "s2", "id": "s2-1", "time": "2026-03-05T10:00:00", "role": "user",
              "text": "we left Porto, Lisbon now"}]
    (tmp_path / "transcripts" / "c.jsonl").write_text("\n".join(json.dumps(t) for t in turns), encoding="utf-8")
    case = {"name": "c", "lang": "en", "now": "2026-04-01T00:00:00", "user": "default",
            "transcripts": [{"path": "transcripts/c.jsonl", "format": "jsonl"}],
            "probes": [{"id": "home", "kind": "current", "question": "Where does the user live?",
                        "expect": ["Lisbon"], "stale": ["Porto"]}]}
    (tmp_path / "c.json").write_text(json.dumps(case), encoding="utf-8")
    assert problems_of(tmp_path / "c.json") == ["c: home: stale 'Porto' and expect 'Lisbon' share a turn"]
