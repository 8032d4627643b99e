"""A question of the user's relation, asked again of their name (`retrieve/relations.py`)."""

from datetime import date

import pytest

from tests.test_valid_to import mem  # noqa: F401 (the fixture: a fresh vault, the clock set)
from vaultmem.memory.memories import write_memory
from vaultmem.retrieve.hits import Hit
from vaultmem.retrieve.relations import asked_relation, name_of


@pytest.mark.parametrize("question, asked", [
    ("Where does the user's boyfriend work?", ("boyfriend", "the user's boyfriend")),
    ("用户的老公在哪个城市工作？", ("husband", "用户的老公")),
    ("What school does the user's daughter go to?", ("daughter", "the user's daughter")),
    ("Who is the user's boyfriend?", None),          # who they are: the memory naming them answers
    ("用户的男朋友叫什么？", None),
    ("Where does the user work?", None),
])
def test_the_relation_a_question_asks_of(question, asked):
    assert asked_relation(question) == asked


def hit(path, text, status="active"):
    return Hit(id=path, path=path, type="fact", title=path, text=text, score=0.5, status=status,
               created="", updated="", source_messages=[])


def test_only_a_slot_that_says_who_someone_is_gives_a_name():
    """"用户希望 Chloe 上的大学离家别太远" speaks of the daughter but gives no name: its value
    (别太远) is not one; "用户的女儿叫 Chloe" does, superseded or not."""
    props = {"wish": {"subject": "user", "attribute": "daughter_college_location", "value": "别太远"},
             "named": {"subject": "user", "attribute": "family:daughter", "value": "Chloe"}}
    wish = hit("wish", "用户希望 Chloe 上的大学离家别太远。")
    assert name_of("daughter", [wish], props.get) is None
    named = hit("named", "用户的女儿叫 Chloe。", status="superseded")
    assert name_of("daughter", [wish, named], props.get) == ("Chloe", ["named"])


def test_a_name_given_only_by_a_superseded_memory_still_leads_to_the_answer(mem):
    """The note that named the daughter was superseded when she left school for UBC (a model
    wrote both in one note): no current hit names her, the superseded one still does."""
    def note(text, subject, attribute, value, **extra):
        return mem.vault.rel(write_memory(mem.vault, text=text, type="fact", user="default", importance=0.7,
                                          valid_from=date(2026, 2, 10),
                                          extra={"subject": subject, "attribute": attribute, "value": value,
                                                 **extra}))

    note("The user's daughter Chloe is in her last year at Fairview High.", "user", "family:daughter",
         "Chloe", status="superseded")
    ubc = note("Chloe moved into her UBC dorm in Vancouver in September 2026.", "Chloe", "school", "UBC")
    note("Chloe wants to study marine biology.", "Chloe", "intended_major", "marine biology")
    note("The user hopes Chloe's university is not too far from home.", "user",
         "daughter_college_location", "not too far")
    mem.reindex()
    memories = [h["path"] for h in mem.search("Where does the user's daughter study?")["hits"]
                if h["type"] != "session"]
    assert memories[0] == ubc
