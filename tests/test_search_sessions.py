"""A session with an assistant, searched as a person asks (a real index, the real model): the
person's own aside is found before the assistant's answer around it, unless the question asks
what the assistant said; a question naming a time ("four weeks ago") finds what was said then."""

import pytest
from conftest import write_note

from vaultmem.api import Memory
from vaultmem.retrieve.search import search

DOCTORS = """**user** · 2026-10-03 09:00
I'm planning a camping trip in the mountains and I need advice on what gear to bring for three nights. By the way, my dermatologist, Dr. Lee, looked at a suspicious mole on my back last week and thankfully it was benign. What should I pack? ^m-1

**assistant** · 2026-10-03 09:01
Before any trip, see a doctor. A good doctor visit covers your vaccinations and any medicine you take, and doctors advise asking your doctor about altitude sickness before three nights in the mountains. Visit a doctor early, bring a list of questions for the doctor, and ask which doctors near the trailhead take walk-in visits. For the gear: a three-season tent with a rain fly, a sleeping bag rated to a few degrees below the coldest night you expect, a sleeping pad, a headlamp with spare batteries, a stove with fuel, a water filter, layers of wool or synthetic clothing, a rain jacket, sturdy boots you have already broken in, a map and compass, sunscreen, insect repellent and a first aid kit with blister care. ^m-2
"""

TOOLS = """**user** · 2026-10-03 15:00
I'm entering a local art competition with a sculpture category and looking for ideas on eco-friendly materials. ^m-1

**assistant** · 2026-10-03 15:01
Recycled paper, reclaimed wood and natural clay all work well for a sculpture. ^m-2

**user** · 2026-10-03 15:02
I actually got my own set of sculpting tools today, a modeling tool set, a wire cutter and a sculpting mat. ^m-3
"""

BRUSHES = """**user** · 2026-10-24 11:00
I got a new set of paint brushes and a palette knife for the art class today. ^m-1
"""

WORD_PROBLEMS = """**user** · 2026-10-10 08:00
Elizabeth eats breakfast b times a week and Madison eats 3 fewer in total. Write an expression for the total number of breakfasts. ^m-1

**user** · 2026-10-10 08:05
The number of muffins she makes is based on how many classmates she has; how many in total if she has 24? ^m-2
"""

FAIR = """**user** · 2026-09-30 18:00
I went to the open evening of the town's craft fair and looked at the pottery stalls. ^m-1
"""

NETWORK = """**user** · 2026-10-12 19:00
I'm reading studies on how gender shapes social networks. I come from a family with three sisters, so I've always had a strong female presence in my life, but my professional network is mostly men. ^m-1
"""


def session(root, name, day, body, ids):
    write_note(root, f"Memory/Sessions/{day} {name}.md",
               {"id": f"01{name.upper()}", "type": "session", "created": f"{day}T09:00:00",
                "updated": f"{day}T09:00:00", "status": "active", "user": "default",
                "session": name, "message_ids": ids, "tags": ["vaultmem/session"]}, body)


@pytest.fixture(scope="module")
def vault(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("assistant-sessions") / "vault"
    (root / ".obsidian").mkdir(parents=True)
    session(root, "camping", "2026-10-03", DOCTORS, ["m-1", "m-2"])
    session(root, "sculpture", "2026-10-03", TOOLS, ["m-1", "m-2", "m-3"])
    session(root, "brushes", "2026-10-24", BRUSHES, ["m-1"])
    session(root, "homework", "2026-10-10", WORD_PROBLEMS, ["m-1", "m-2"])
    session(root, "network", "2026-10-12", NETWORK, ["m-1"])
    session(root, "fair", "2026-09-30", FAIR, ["m-1"])
    mem = Memory(root, embedder=embedder)
    mem.reindex()
    return lambda question: search(mem.vault, question, k=10, embedder=embedder)


def turns(hits, name):
    return [(h.source_messages, h.parts) for h in hits if h.type == "session" and name in h.path]


def test_the_persons_aside_ranks_above_the_assistants_answer_that_shares_the_questions_words(vault):
    hits = vault("Which doctors did I visit?")
    camping = [messages for messages, _ in turns(hits, "camping")]
    assert ["m-1"] in camping and ["m-2"] in camping
    assert camping.index(["m-1"]) < camping.index(["m-2"])


def test_a_question_about_what_the_assistant_said_or_found_keeps_its_answer_first(vault):
    for question in ("What did you recommend about seeing a doctor before the trip?",
                     "Why should I see a doctor before the trip?"):
        assert turns(vault(question), "camping")[0][0] == ["m-2"], question


def test_a_question_naming_a_time_finds_what_was_said_then(vault, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-10-31T10:00:00")
    hits = vault("I mentioned an investment for a competition four weeks ago? What did I buy?")
    dated = [h for h in hits if h.parts.get("date")]
    assert dated and all(h.valid_from in ("2026-10-03", "2026-09-30") for h in dated)
    tools = next(n for n, h in enumerate(hits) if "sculpture" in h.path and "m-3" in h.source_messages)
    assert all(n > tools for n, h in enumerate(hits) if "brushes" in h.path)
    # Asked without a time, nothing is favoured for its day.
    assert not any(h.parts.get("date") for h in vault("What did I buy for my art?"))


def test_a_named_day_favours_what_was_said_on_it_over_what_was_said_days_off(vault, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-10-31T10:00:00")
    hits = vault("I mentioned an investment for a competition four weeks ago? What did I buy?")
    on_the_day = [h for h in hits if h.valid_from == "2026-10-03"]
    days_off = next(h for h in hits if "fair" in h.path)   # said three days before that day
    assert on_the_day and all(h.parts["date"] == pytest.approx(0.2) for h in on_the_day)
    assert 0 < days_off.parts["date"] < 0.1
    # Its vector is closer than any said on the day; the distance from the day ranks it last.
    assert days_off.parts["vector"] > max(h.parts["vector"] for h in on_the_day)
    assert all(hits.index(h) < hits.index(days_off) for h in on_the_day)


def test_a_doctor_written_short_is_a_doctor(vault):
    hits = vault("Which doctors did I visit?")
    aside = next(h for h in hits if "camping" in h.path and h.source_messages == ["m-1"])
    assert aside.parts["keyword"] > 0       # "my dermatologist, Dr. Lee" shares "doctor"
    assert any(h.parts["keyword"] > 0 for h in vault("What did Doctor Lee look at?")
               if "camping" in h.path and h.source_messages == ["m-1"])


def test_a_time_ahead_or_today_alone_favours_no_day(vault, monkeypatch):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-10-24T18:00:00")
    for question in ("Any ideas for brushes to buy next week?", "What should I paint tonight?"):
        assert not any(h.parts.get("date") for h in vault(question))


def test_a_question_that_counts_is_embedded_without_its_counting_words(vault, monkeypatch):
    from vaultmem.retrieve import search as search_module

    question = "How many different doctors did I visit?"
    stripped = vault(question)
    monkeypatch.setattr(search_module, "embedded_query", lambda query: query)
    whole = vault(question)   # embedded with "how many", the word problems come closer

    def aside(hits):
        return next(h for h in hits if "camping" in h.path and h.source_messages == ["m-1"])
    assert stripped[0] is aside(stripped)
    assert aside(stripped).parts["vector"] > aside(whole).parts["vector"] + 0.05
    assert any("homework" in h.path for h in whole) and not any("homework" in h.path for h in stripped)
