"""The hygiene heuristics of benchmarks/vault_audit.py that memquality.py prints (issue 16):
the unresolved-reference check on memory notes, with the issue's verbatim examples."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from vault_audit import HYGIENE_CHECKS, VaultNote, hygiene, not_self_contained, unresolved_reference  # noqa: E402

# Not self-contained: what "that", "she", "这个" stand for is not in the note.
UNRESOLVED = [
    # issue 16, verbatim
    "The user will try that.",
    "The user and others will book that.",
    "She's 68 and still…",
    "According to the user, that looks great, yes please make a shopping list.",
    # Chinese analogues
    "用户会试试那个。",
    "她68了还…",
    "用户说：这个不错，帮我列个清单。",
    # from harness vaults
    "用户想先给他转两万块红包。",
    "好，用户把这个发给用户爸。",
    # the same rules, other wordings
    "On 2026-10-01, she moved to Porto.",
    "According to the user, on 2026-09-25, they said yes.",
    "They fly out October 9.",
    "His flight lands at noon.",
    "It was great.",
    "This is the user's favourite.",
    "The user doesn't like that.",
    "The user will go there.",
    "The user will call him, then book it.",
    "The user's mum turned 68 and she's still…",
    "用户说：她才四岁。",
    "2026-09-27，他又迟到了。",
    "这是用户最喜欢的。",
    "用户不喜欢那样。",
    "用户很喜欢它。",
    "In the week of 2026-11-08, she went four times.",
    "It's for ledgerkit, the user's internal Python library. Bump the version.",
]

# Self-contained: no pronoun, a pronoun with its antecedent in the note, or a non-referring one.
SELF_CONTAINED = [
    "The user is allergic to penicillin.",
    "The user's sister Priya lives in Leeds and she visits every March.",
    "The user likes it when answers start with the conclusion.",   # anticipatory "it"
    "The user will eat pretty much anything except eggplant, can't stand it.",  # the exception
    "On 2026-09-20, the user backed up the photos to the T7 drive and put it in the fire safe.",
    "It is important to the user that answers are short.",
    "It's the user's first week at Orrin Robotics.",               # empty "it"
    "Always give the user metric units. Km, kg, celsius, all of it.",
    "The user moved to Lisbon and loves it there.",
    "The user bought a new bike and rides it every day.",
    "The user's partner is Noor; the user met her in 2019.",
    "The user's daughter Yara is 4 and she loves sheep.",
    "Those shoes are the user's favourite.",                       # determiner, not pronoun
    "This morning the user ran 5 km.",
    "Noor got the job at Oakcrest Children's.",
    "The user's title is Analytics Manager, and that is new.",
    "Backups:\n1. plug in the [[T7]] disk\n2. run it",
    "用户对芒果过敏。",
    "用户的长期要求：先说结论，再说理由。",
    "用户弟弟林嘉豪11月22号在泉州结婚。",
    "用户爸林国栋要上台讲话，他紧张得睡不着。",
    "用户会弹吉他。",                                              # 吉他, a guitar
    "用户不喜欢其他人碰他的电脑。",                                # 其他, others
    "那先问个实际的：用户家柯基馒头最近老是软便。",                # 那 = "then"
    "用户这个月要去成都出差。",                                    # 这个 + noun
]


@pytest.mark.parametrize("statement", UNRESOLVED)
def test_unresolved_reference_is_flagged(statement):
    assert unresolved_reference(statement), statement


@pytest.mark.parametrize("statement", SELF_CONTAINED)
def test_self_contained_note_is_not_flagged(statement):
    assert unresolved_reference(statement) is None


def test_unresolved_reference_says_why():
    assert unresolved_reference("The user will try that.") == "bare 'that' ends a clause"
    assert unresolved_reference("She's 68 and still…") == "starts with \"She's\""
    assert unresolved_reference("用户说：这个不错，帮我列个清单。") == "starts with '这个'"
    assert unresolved_reference("The user's mum turned 68 and she's still…") == (
        "cut off after \"she's still\"")


def _note(rel, statement, type="fact", status="active"):
    return VaultNote(rel, type, status, statement, statement, "")


def test_hygiene_lists_unresolved_and_short_memories_each_note_once_in_the_union():
    notes = [_note("Memory/Facts/a.md", "The user will try that."),            # both
             _note("Memory/Facts/b.md", "The user and others will book that."),  # unresolved
             _note("Memory/Facts/c.md", "The user is Ravi."),                  # short
             _note("Memory/Facts/d.md", "The user is allergic to penicillin."),
             _note("Memory/Facts/e.md", "The user will try that.", status="superseded"),
             _note("Memory/Sessions/s.md", "She's 68 and still…", type="session")]
    found = hygiene(notes)
    assert list(found) == list(HYGIENE_CHECKS)
    assert [i.split(" (")[0] for i in found["unresolved_references"]] == [
        "Memory/Facts/a.md", "Memory/Facts/b.md"]
    assert found["unresolved_references"][1] == (
        "Memory/Facts/b.md (bare 'that' ends a clause: 'The user and others will book that.')")
    assert [i.split(" (")[0] for i in found["short_memories"]] == [
        "Memory/Facts/a.md", "Memory/Facts/c.md"]
    assert not_self_contained(found) == 3


def test_memquality_prints_the_issue_hygiene_line():
    from memquality import hygiene_line

    cases = [{"hygiene": hygiene([_note("Memory/Facts/a.md", "The user will try that."),
                                  _note("Memory/Facts/b.md", "用户会试试那个。")])},
             {"hygiene": {**{c: [] for c in HYGIENE_CHECKS},
                          "uuid_sessions": ["Memory/Sessions/x.md"]}}]
    assert hygiene_line(cases) == (
        "memory notes with an unresolved reference or fewer than 4 content words 2, junk hubs 0, "
        "UUID-named session notes 1, broken fences 0 (goal 0 each)")


# ---- what a reader sees (issue 33): the issue's own examples are flagged, clean notes are not ----

@pytest.mark.parametrize("statement, check", [
    ("The other big news the user and others are moving", "filler_openers"),
    ("On the bright side — big news — the user got promoted", "filler_openers"),
    ("Important one the user has a severe peanut allergy, like…", "filler_openers"),
    ("According to the user, Work-wise, being remote as Analytics Manager suits them.", "filler_openers"),
    ("跟你说个事，用户等人决定搬去上海了。", "filler_openers"),
    ("挺好的，就是上海菜偏甜。", "filler_openers"),
    ("The user need help planning a trip.", "bad_agreement"),
    ("用户是说用户儿子叫小宇，宇宙的宇，不是下雨的雨。", "bad_agreement"),
    ("要的，帮用户写一段简短的生日致辞。", "requests"),
    ("The user will need a dinner place for Saturday.", "requests"),
    ("Can you help the user plan a trip to Lisbon?", "requests"),
    ("用户是说用户儿子叫小宇，宇宙的宇，不是下雨的雨。", "correction_talk"),
    ("哎打错字了，是恒锐，锐利的锐。", "correction_talk"),
])
def test_the_issues_examples_of_notes_nobody_would_write_are_flagged(statement, check):
    from vault_audit import reader_reasons

    assert check in reader_reasons(_note("Memory/Facts/x.md", statement))


@pytest.mark.parametrize("statement", [
    "The user lives in Denver (moved 2026-10-12).",
    "用户住在上海徐汇区（2026-10-18 搬入）。",
    "The user's son is called 小宇.",
    "The user has a severe peanut allergy.",
    "The user needs a wheelchair-accessible table when eating out.",
    "The user works on the payments team at Figma.",
    "用户的儿子叫小宇。",
    "The user is learning Japanese and wants to pass JLPT N2 in December.",
])
def test_statements_a_person_would_write_are_not_flagged(statement):
    from vault_audit import reader_reasons

    assert reader_reasons(_note("Memory/Facts/Lives in Denver.md", statement)) == {}


@pytest.mark.parametrize("name, fragment", [
    ("Brightline Health here in Chicago", True), ("上海的一家互联网", True), ("北京一家游戏公司", True),
    ("Mountain", True), ("Christmas", True), ("Brightline Health", False), ("小宇", False),
    ("Denver", False), ("星河互娱", False), ("Lincoln Middle School", False),
])
def test_fragment_hubs(name, fragment):
    from vault_audit import reader_reasons

    found = reader_reasons(VaultNote(f"Memory/Entities/{name}.md", "entity", "active", "", "", ""))
    assert ("fragment_hubs" in found) == fragment


def test_a_long_title_is_flagged_and_the_hygiene_lists_hold_the_reader_checks():
    long = "Memory/Facts/" + "The user and others are moving to a new flat near the river next month" + ".md"
    found = hygiene([_note(long, "The user is moving to a flat near the river next month."),
                     VaultNote("Memory/Entities/Mountain.md", "entity", "active", "", "", "")])
    assert found["long_titles"] == [f"{long} (70 characters: 'The user is moving to a flat near the river next month.')"]
    assert found["fragment_hubs"] == ["Memory/Entities/Mountain.md (a piece of a sentence or a common word, not a name)"]


def test_reader_checks_leave_standing_instructions_abbreviations_and_questions_alone():
    from vault_audit import reader_reasons

    assert reader_reasons(_note("Memory/Procedures/x.md", "以后价格都帮用户换算成人民币。", type="procedure")) == {}
    assert reader_reasons(_note("Memory/Facts/x.md", "用户家布偶雪球最近老软便，是不是粮的问题。")) == {}
    assert reader_reasons(VaultNote("Memory/Entities/M&A.md", "entity", "active", "", "", "")) == {}
