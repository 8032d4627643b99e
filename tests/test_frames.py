"""Issue 32: a statement's slot read from what it speaks of (a cue and a value of the
attribute's kind), with its modality, in English and Chinese; the statement a slot makes
(issue 33); and the offline extractor keeping talk of changes that did not happen out of
memory. The read-time net over the same readings is `test_current.py`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest

from vaultmem.extract.offline import extract_offline
from vaultmem.text.frames import read
from vaultmem.text.modality import Reading
from vaultmem.text.question_frames import question_frame
from vaultmem.text.statements import frame_statement


@pytest.mark.parametrize("sentence, attribute, value, modality", [
    ("ugh the commute from the new place in Oakland is brutal", "home", "Oakland", "fact"),
    ("the Lisbon flat finally feels like home", "home", "Lisbon", "fact"),
    ("We made it — we moved to Denver last week!", "home", "Denver", "fact"),
    ("we're probably moving to Lisbon in spring", "home", "Lisbon", "plan"),
    ("we are moving to Denver next month", "home", "Denver", "plan"),
    ("we were going to move to Austin but it fell through, staying in Denver", "home", "Austin", "negated"),
    ("I thought about switching to Neovim but I'm sticking with VS Code", "tool:editor", "Neovim", "negated"),
    ("now that I'm at Figma, can you help me prep a 30-60-90 plan", "employer", "Figma", "fact"),
    ("I got the job at Brightline Health!", "employer", "Brightline Health", "fact"),
    ("On the bright side — big news — I got promoted to Analytics Manager", "job", "Analytics Manager", "fact"),
    ("my mum keeps telling everyone I'm the head of design now", "job", "head of design", "fact"),
    ("my new manager is Dana Whitfield", "manager", "Dana Whitfield", "fact"),
    ("I switched to the train, driving to work was killing me", "commute", "train", "fact"),
    ("I quit keto last month", "diet", "keto", "ended"),
    ("I'm learning Japanese", "learning", "Japanese", "fact"),
    ("跟你说个事，我们决定搬去上海了，住在徐汇区", "home", "上海", "fact"),
    ("我们上个月搬到了杭州", "home", "杭州", "fact"),
    ("我们打算明年搬到深圳", "home", "深圳", "plan"),
    ("我们本来打算搬去苏州，后来没搬成", "home", "苏州", "negated"),
    ("11月2号入职明帆物流了", "employer", "明帆物流", "fact"),
    ("我升职了，现在是产品总监", "job", "产品总监", "fact"),
    ("我现在用Cursor写代码，不用VS Code了", "tool:editor", "Cursor", "fact"),
])
def test_a_sentence_fills_a_slot_with_its_modality(sentence, attribute, value, modality):
    found = read(sentence)
    assert found is not None, sentence
    assert (found.attribute, found.value, found.modality) == (attribute, value, modality)


@pytest.mark.parametrize("sentence, subject", [
    ("my friend Jake just moved to Seattle", "Jake"),
    ("我老公下个月要去杭州出差", None),
])
def test_someone_elses_news_does_not_fill_the_speakers_slot(sentence, subject):
    found = read(sentence)
    assert found is None or (found.subject == subject and found.modality == "other")


@pytest.mark.parametrize("sentence", [
    "We're on Python 3.12 for this service",   # a project's stack, not the person's
    "the weather is nice today",
    "我打算这边先辞职，到了厦门再找工作。",
    "the garage was built in 1994",
])
def test_sentences_that_fill_no_slot(sentence):
    assert read(sentence) is None


@pytest.mark.parametrize("question, attribute", [
    ("Where does the user live?", "home"), ("Which city is the user based in now?", "home"),
    ("用户现在住在哪个城市？", "home"), ("Where does the user work?", "employer"),
    ("用户在哪家公司工作？", "employer"), ("What is the user's job title?", "job"),
    ("Which code editor does the user use?", "tool:editor"), ("What diet is the user on?", "diet"),
    ("What did the user eat for dinner?", None), ("用户怎么上班？", "commute"),
    ("How does the user get to work?", "commute"), ("Where does the user's daughter study?", "school"),
    ("用户的女儿在哪所学校读书？", "school"), ("Where is the user studying?", "school"),
    ("What does the user study?", None),
    ("What is the user's profession?", "job"), ("What does the user do for a living?", "job"),
    ("What does the user do?", "job"), ("What does the user do now?", "job"),
    ("What does the user do these days?", "job"),
    ("What does the user do on Tuesday and Thursday evenings?", None),   # a pastime, not a job
    ("Where does the user work out?", None), ("Where is the user working now?", "employer"),
])
def test_a_question_names_the_attribute_it_asks_for(question, attribute):
    assert question_frame(question) == attribute


def test_a_name_with_its_possessive_is_the_same_name():
    """"Jonah's transfer" names Jonah: a memory that names only Jonah names nothing it does not."""
    from vaultmem.text.question_frames import named_values

    assert named_values("Jonah's transfer to Ridgeline in Denver fell through.") == {"jonah", "ridgeline", "denver"}
    assert named_values("Maya’s school is Whitman.") == {"maya", "whitman"}


@pytest.mark.parametrize("reading, name, chinese, said, statement, title", [
    (Reading("home", "Oakland"), "the user", False, None, "The user lives in Oakland.", "Lives in Oakland"),
    (Reading("employer", "Figma"), "the user", False, datetime(2026, 10, 12).date(),
     "The user works at Figma (since 2026-10-12).", "Works at Figma"),
    (Reading("job", "senior analyst"), "Caroline", False, None, "Caroline works as a senior analyst.",
     "Job: senior analyst"),
    (Reading("employer", "Kestrel", "ended"), "the user", False, None, "The user no longer works at Kestrel.",
     "Left Kestrel"),
    (Reading("home", "上海徐汇区"), "用户", True, datetime(2026, 10, 18).date(), "用户住在上海徐汇区（2026-10-18 起）。",
     "住在上海徐汇区"),
    (Reading("tool:editor", "Cursor"), "用户", True, None, "用户用Cursor（编辑器）。", "编辑器：Cursor"),
])
def test_a_slot_makes_one_clean_statement_and_a_title_that_names_it(reading, name, chinese, said, statement, title):
    assert frame_statement(reading, name, chinese, said) == (statement, title)


@dataclass
class Turn:
    id: str
    text: str
    speaker: str = "user"
    role: str = "user"
    time: datetime = datetime(2026, 10, 1, 10, 0)


def test_the_extractor_writes_the_slot_not_the_chat_around_it():
    [found] = extract_offline([Turn("m-1", "ugh the commute from the new place in Oakland is brutal")])
    assert (found.content, found.title) == ("The user lives in Oakland.", "Lives in Oakland")
    assert (found.subject, found.attribute, found.value) == ("user", "home", "Oakland")


@pytest.mark.parametrize("text", [
    "we were going to move to Austin but it fell through, staying in Denver",
    "I'm thinking about moving to Austin",
    "I thought about switching to Neovim but I'm sticking with VS Code",
    "我们本来打算搬去苏州，后来没搬成",
])
def test_talk_of_a_change_that_did_not_happen_leaves_no_memory(text):
    found = extract_offline([Turn("m-1", text)])
    assert not [c for c in found if "Austin" in c.content or "Neovim" in c.content or "苏州" in c.content]


def test_a_firm_plan_is_remembered_but_fills_no_slot_until_it_names_its_day():
    [found] = extract_offline([Turn("m-1", "we're going to move to Denver, it's decided")])
    assert "Denver" in found.content and found.attribute is None
    [dated] = extract_offline([Turn("m-1", "The other big news: we are moving to Denver next month")])
    assert (dated.attribute, dated.value, str(dated.valid_from)) == ("home", "Denver", "2026-11-01")
