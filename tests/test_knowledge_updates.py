"""Knowledge updates (issue 15): a new value for the same thing supersedes the old memory,
in English and Chinese; a correction fixes one detail and keeps the rest; every memory is
dated by when it was said, so `--as-of` a day between the two finds the old value.

The unit half reads the extractor's detectors and the correction rules on sentences; the
end-to-end half extracts real transcripts into a real vault (git, LanceDB, the bundled
model) with the clock set after the conversations, so every date must come from the turns.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from tests.helpers.clock import clock_at
from vaultmem import api
from vaultmem.extract.clauses import split_slots
from vaultmem.extract.offline import extract_offline
from vaultmem.store.note import read_note
from vaultmem.store.values import as_list, link_target
from vaultmem.text.corrections import apply_correction, find_correction
from vaultmem.text.patterns import detect

NOW = "2026-11-30T12:00:00"
OLD_DAY, NEW_DAY = datetime(2026, 8, 10, 9, 0), datetime(2026, 10, 5, 18, 0)


# --- which slot a sentence fills ------------------------------------------------------

@pytest.mark.parametrize("sentence, chinese, attribute, value", [
    ("I live in Chicago with my wife", False, "home", "Chicago"),
    ("we moved to Denver last month", False, "home", "Denver"),
    ("guess who lives in Raleigh now", False, "home", "Raleigh"),
    ("I work at Acme Corp", False, "employer", "Acme Corp"),
    ("First week at Orrin Robotics!", False, "employer", "Orrin Robotics"),
    ("I joined Globex in May", False, "employer", "Globex"),
    ("I work as a junior designer at Acme", False, "job", "junior designer"),
    ("I got promoted, I'm design lead now", False, "job", "design lead"),
    ("I'm single", False, "relationship", "single"),
    ("I'm engaged", False, "relationship", "engaged"),
    ("my dog is called Rex", False, "pet:dog", "Rex"),
    ("I'm doing keto at the moment", False, "diet", "keto"),
    ("my doctor put me on a Mediterranean diet", False, "diet", "mediterranean"),
    ("honestly bouldering is not for me", False, "likes:bouldering", "no"),
    ("now I'm completely hooked on bouldering", False, "likes:bouldering", "yes"),
    ("I do all my coding in Sublime Text", False, "editor", "Sublime Text"),
    ("I've moved over to PyCharm for work", False, "editor", "PyCharm"),
    ("我住在北京", True, "home", "北京"),
    ("我们已经在上海住下来了！", True, "home", "上海"),
    ("我在成都的锦程新能源做财务分析师", True, "job", "财务分析师"),
    ("11月2号入职明帆物流", True, "employer", "明帆物流"),
    ("我一天一杯奶茶，已经戒不掉了", True, "likes:奶茶", "yes"),
    ("所以奶茶我已经彻底戒了", True, "likes:奶茶", "no"),
    ("我现在吃素食", True, "diet", "素食"),
    ("我家的猫叫咪咪", True, "pet:猫", "咪咪"),
])
def test_a_statement_names_the_slot_it_fills(sentence, chinese, attribute, value):
    found = detect(sentence, chinese)
    assert found is not None, sentence
    assert (found.attribute, found.value) == (attribute, value)


@pytest.mark.parametrize("sentence", [
    "I love it", "that is not for me to decide", "I'm in Paris this week", "我很喜欢这个",
])
def test_statements_that_set_no_lasting_slot_are_not_taken_for_one(sentence):
    found = detect(sentence, any("\u4e00" <= c <= "\u9fff" for c in sentence))
    assert found is None or found.attribute in ("location",), (sentence, found)


def test_a_sentence_that_sets_several_things_becomes_one_clause_per_thing():
    assert split_slots("I'm Samir, backend developer at Pellucid Systems (small payments startup).",
                       False) == ["I'm Samir", "I'm a backend developer at Pellucid Systems (small payments startup)."]
    assert split_slots("我叫林嘉怡，在成都的锦程新能源做财务分析师，天天跟报表打交道。", True) == \
        ["我叫林嘉怡", "我在成都的锦程新能源做财务分析师，天天跟报表打交道。"]
    assert split_slots("I live in Cleveland with my partner Noor and our son Kabir, who just turned five",
                       False) == ["I live in Cleveland", "I live with my partner Noor and our son Kabir, who just turned five"]
    # one slot (or none): the sentence stays whole
    assert split_slots("I love sushi, pizza, and pasta", False) == ["I love sushi, pizza, and pasta"]
    assert split_slots("Thanks, that helps a lot", False) == ["Thanks, that helps a lot"]


# --- corrections ------------------------------------------------------------------------

@pytest.mark.parametrize("turn, chinese, statement, fixed", [
    ("sorry, I meant Thursday not Tuesday. swim is thursdays.", False,
     "Kabir's swim lessons are Tuesday evenings.", "Kabir's swim lessons are Thursday evenings."),
    ("wait, no, sorry, it's December 17. The 14th is the dress rehearsal.", False,
     "Yara's school play is on December 14 and she is a sheep.",
     "Yara's school play is on December 17 and she is a sheep."),
    ("oops, I meant December 17", False,
     "On 2026-12-14, the user's daughter has her school play.",
     "On 2026-12-17, the user's daughter has her school play."),
    ("sorry, his name is Theo, not Leo", False,
     "The user's son Leo is six and loves dinosaurs.", "The user's son Theo is six and loves dinosaurs."),
    ("不对，我是说11月22号，8号是他们拍婚纱照的日子", True,
     "用户弟弟11月8号在泉州结婚。", "用户弟弟11月22号在泉州结婚。"),
    ("说错了，不是杭州，是苏州", True, "用户的公司在杭州。", "用户的公司在苏州。"),
])
def test_a_correction_fixes_one_detail_and_keeps_the_rest(turn, chinese, statement, fixed):
    correction = find_correction(turn, chinese)
    assert correction is not None
    assert apply_correction(statement, correction) == fixed


@pytest.mark.parametrize("turn, chinese", [
    ("actually I love Tuesdays", False),        # "actually" in passing, no detail fixed
    ("see you on Thursday!", False),
    ("oops, it is not that bad", False),
    ("不对劲，今天好累", True),
])
def test_turns_that_correct_nothing_are_not_corrections(turn, chinese):
    assert find_correction(turn, chinese) is None


def test_a_correction_leaves_a_statement_without_that_detail_alone():
    correction = find_correction("sorry, I meant Thursday not Tuesday", False)
    assert apply_correction("The user lives in Denver.", correction) is None
    assert apply_correction("Practice is on Monday.", correction) is None  # not the named old value


def test_the_offline_extractor_turns_a_correction_turn_into_one_correction():
    class Turn:
        def __init__(self, id, text, role="user"):
            self.id, self.text, self.role, self.speaker, self.time = id, text, role, "user", OLD_DAY

    cands = extract_offline([Turn("m-1", "Kabir's swim lessons are Tuesday evenings and I take him."),
                             Turn("m-2", "Great, noted.", "assistant"),
                             Turn("m-3", "sorry, I meant Thursday not Tuesday. so mon/wed/sat works")])
    fixes = [c for c in cands if c.corrects is not None]
    assert [c.source_messages for c in fixes] == [["m-3"]]
    assert not [c for c in cands if c.corrects is None and "m-3" in c.source_messages]


# --- end to end -------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def fake_clock():
    with clock_at(NOW):
        yield


def write_sessions(path: Path, sessions) -> Path:
    """`sessions`: [(session id, start, [user texts])]; each user turn gets an assistant reply."""
    lines = []
    for session, start, texts in sessions:
        when = start
        for n, text in enumerate(texts):
            for role, said in (("user", text), ("assistant", "Got it, thanks for telling me.")):
                lines.append(json.dumps({"session": session, "id": f"{session}-{len(lines)}",
                                         "time": when.isoformat(), "role": role, "text": said},
                                        ensure_ascii=False))
                when += timedelta(minutes=1)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def notes_of(root: Path) -> list:
    return [read_note(p) for folder in ("Facts", "Preferences", "Events", "Procedures")
            for p in (root / "Memory" / folder).glob("*.md")]


def holding(notes, text: str):
    found = [n for n in notes if text.lower() in n.statement().lower()]
    assert found, f"no memory holds {text!r}: {[n.statement() for n in notes]}"
    return found


EN_OLD = ["I live in Chicago with my partner.", "I work at Acme Corp.",
          "I work as a junior designer.", "I'm single.", "I'm doing keto at the moment.",
          "honestly bouldering is not for me.", "I do all my coding in Sublime Text.",
          "my dog is called Rex."]
EN_NEW = ["big news, we moved to Denver last week.", "First week at Globex Labs!",
          "I got promoted, I'm design lead now.", "I'm engaged!", "my doctor put me on a Mediterranean diet.",
          "ok confession, now I'm completely hooked on bouldering.", "I've moved over to PyCharm for work.",
          "my dog is called Max now, we renamed him."]
# (old value, new value) for every family above, in order
EN_PAIRS = [("Chicago", "Denver"), ("Acme Corp", "Globex Labs"), ("junior designer", "design lead"),
            ("single", "engaged"), ("keto", "Mediterranean"), ("bouldering is not", "hooked"),
            ("Sublime Text", "PyCharm"), ("Rex", "Max")]
ZH_OLD = ["我住在北京，离公司很近。", "我在杭州的星河科技做产品经理。", "我一天一杯奶茶，戒不掉。", "我养了一只猫，叫咪咪。"]
ZH_NEW = ["我们已经在上海住下来了！", "下周一入职云帆物流，还是做产品。", "医生让我控糖，所以奶茶我已经彻底戒了。",
          "我家的猫叫豆豆，之前那只送给我妈了。"]
ZH_PAIRS = [("北京", "上海"), ("星河科技", "云帆物流"), ("一天一杯", "控糖"), ("咪咪", "豆豆")]


@pytest.fixture(scope="module")
def updated_vaults(tmp_path_factory, embedder):
    """One English and one Chinese vault, each extracted from an old session (Aug 10) and a
    new one (Oct 5) that changes every family, plus a session with corrections."""
    out = {}
    for lang, old, new in (("en", EN_OLD, EN_NEW), ("zh", ZH_OLD, ZH_NEW)):
        root = tmp_path_factory.mktemp(f"updates-{lang}") / "vault"
        api.init(root)
        mem = api.Memory(root, embedder=embedder)
        corrections = (["My son Leo is six and loves dinosaurs.", "sorry, his name is Theo, not Leo.",
                        "Yara's school play is on December 14.", "wait, no, sorry, it's December 17."]
                       if lang == "en" else
                       ["我弟弟11月8号在泉州结婚。", "不对，我是说11月22号，8号是拍婚纱照的日子。"])
        transcript = write_sessions(root.parent / f"{lang}.jsonl", [
            ("old", OLD_DAY, old), ("fix", OLD_DAY + timedelta(days=1), corrections), ("new", NEW_DAY, new)])
        report = mem.extract([transcript])
        assert not report["errors"], report["errors"]
        out[lang] = (root, mem, report)
    return out


@pytest.mark.parametrize("lang, pair", [("en", p) for p in EN_PAIRS] + [("zh", p) for p in ZH_PAIRS])
def test_a_new_value_supersedes_the_old_memory_with_links_both_ways(updated_vaults, lang, pair):
    root, _mem, _report = updated_vaults[lang]
    old_value, new_value = pair
    notes = notes_of(root)
    new = [n for n in holding(notes, new_value) if n.status == "active"]
    assert new, f"{new_value!r} is not active"
    old = holding(notes, old_value)
    assert all(n.status == "superseded" for n in old), [(n.statement(), n.status) for n in old]
    for note in old:
        assert str(note.get("valid_to")) == NEW_DAY.date().isoformat()
        successors = {link_target(s) for s in as_list(note.get("superseded_by"))}
        assert successors & {n.path.stem for n in new}
    assert any(note.path.stem in {link_target(s) for s in as_list(n.get("supersedes"))}
               for n in new for note in old)


@pytest.mark.parametrize("lang, statement, said", [
    ("en", "The user is single.", OLD_DAY.date()),
    ("en", "The user is engaged.", NEW_DAY.date()),
    ("en", "The user works at Acme Corp.", OLD_DAY.date()),
    ("en", "moved to Denver", date(2026, 9, 28)),        # "last week": the week it names
    ("zh", "北京", OLD_DAY.date()),
    ("zh", "上海", NEW_DAY.date()),
])
def test_memories_are_dated_by_when_they_were_said(updated_vaults, lang, statement, said):
    root, _mem, _report = updated_vaults[lang]
    for note in holding(notes_of(root), statement):
        assert str(note.get("valid_from")) == said.isoformat(), note.statement()
        assert str(note.get("created")).startswith(NOW[:10])  # the note's own creation day


@pytest.mark.parametrize("lang, old_text, new_text, keeps, day", [
    ("en", "Leo", "Theo", "dinosaurs", None),
    ("en", "December 14", "December 17", "play", "2026-12-17"),
    ("zh", "11月8号", "11月22号", "泉州", "2026-11-22"),
])
def test_a_correction_supersedes_and_keeps_what_it_did_not_change(updated_vaults, lang, old_text, new_text, keeps,
                                                                  day):
    root, _mem, _report = updated_vaults[lang]
    notes = notes_of(root)
    fixed = [n for n in holding(notes, new_text) if n.status == "active"]
    assert fixed and all(keeps in n.statement() for n in fixed), [n.statement() for n in fixed]
    if day:  # the event now happens on the day the fix names
        assert [str(n.get("valid_from")) for n in fixed] == [day]
    assert all(n.status == "superseded" for n in holding(notes, old_text))
    # the corrected note cites the turn that was corrected and the turn that corrected it
    assert len(as_list(fixed[0].get("source_messages"))) == 2


@pytest.mark.parametrize("lang, question, old_value, new_value", [
    ("en", "Where does the user live?", "Chicago", "Denver"),
    ("en", "What diet is the user on?", "keto", "Mediterranean"),
    ("zh", "用户住在哪个城市？", "北京", "上海"),
    ("zh", "用户在哪家公司工作？", "星河科技", "云帆物流"),
])
def test_search_as_of_a_day_before_the_change_finds_the_old_value(updated_vaults, lang, question,
                                                                   old_value, new_value):
    _root, mem, _report = updated_vaults[lang]
    then = [h for h in mem.search(question, as_of="2026-09-01")["hits"] if h["type"] != "session"]
    assert then and old_value.lower() in then[0]["text"].lower(), then[:2]
    now = [h for h in mem.search(question)["hits"] if h["type"] != "session"]
    assert now and new_value.lower() in now[0]["text"].lower(), now[:2]
    assert not any(old_value.lower() in h["text"].lower() for h in now)


def test_a_transcript_without_times_gets_no_guessed_date(tmp_path, embedder):
    root = tmp_path / "vault"
    api.init(root)
    mem = api.Memory(root, embedder=embedder)
    transcript = tmp_path / "undated.jsonl"
    transcript.write_text(json.dumps({"session": "s", "id": "m-1", "role": "user",
                                      "text": "Next Friday I start a new job at Initech."}) + "\n", encoding="utf-8")
    mem.extract([transcript])
    notes = notes_of(root)
    assert notes
    for note in notes:
        assert note.get("valid_from") is None
        assert "vaultmem/undated" in as_list(note.get("tags"))


def test_rerunning_the_transcripts_changes_nothing(updated_vaults, tmp_path):
    root, mem, first = updated_vaults["en"]
    again = mem.extract([root.parent / "en.jsonl"])
    assert again["created"] == again["superseded"] == again["updated"] == 0, \
        [d for d in again["decisions"] if d["action"] not in ("unchanged", "rejected")]
