"""The hygiene heuristics of benchmarks/vault_audit.py that memquality.py prints (issue 16):
the unresolved-reference check on memory notes, with the issue's verbatim examples."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from vault_audit import (HYGIENE_CHECKS, VaultNote, hygiene, not_self_contained,  # noqa: E402
                         unresolved_reference)

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
