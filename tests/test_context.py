import json
import sys
from pathlib import Path

import pytest
from conftest import copy_sample_vault, memory_meta, write_note

from vaultmem.api import Memory
from vaultmem.retrieve.context import HEADER, NO_MEMORIES, PINNED_HEADER, build_context
from vaultmem.retrieve.hits import Hit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from memquality import NOT_CURRENT, memory_entries  # noqa: E402


@pytest.fixture(scope="module")
def memory(tmp_path_factory, embedder):
    mem = Memory(copy_sample_vault(tmp_path_factory.mktemp("context") / "vault"), embedder=embedder)
    mem.reindex()
    return mem


def hit(n, type="preference", text="The user drinks tea without milk.", score=0.8, **extra):
    fields = {"path": f"Memory/x{n}.md", "source_messages": [f"m-{n}"], "title": f"x{n}", **extra}
    return Hit(id=f"01H{n}", type=type, text=text, score=score, status="active",
               created="2026-11-20T19:45:00", updated="2026-11-20T19:45:00", **fields)


def test_lines_are_in_score_order_with_excerpts_and_memories_interleaved(embedder):
    hits = [hit(2, sources=["[[2026-11-29 chat#^m-12]]"]),
            hit(1, type="session", text="Alice: I drink too much coffee.", score=1.8,  # shown at half
                valid_from="2026-11-29", sources=["[[2026-11-29 chat#^m-11]]"]),
            hit(3, text="The user likes oat milk.", score=0.5)]
    block = build_context(hits, budget=500, count_tokens=embedder.count_tokens)
    assert block["text"].splitlines() == [
        HEADER,
        "- [2026-11-29 · [[2026-11-29 chat#^m-11]] · score 0.90] Alice: I drink too much coffee.",
        "- [preference · 2026-11-20 · score 0.80] The user drinks tea without milk. "
        "(source: [[2026-11-29 chat#^m-12]])",
        "- [preference · 2026-11-20 · score 0.50] The user likes oat milk. (source messages: m-3)"]
    assert (block["memories"], block["snippets"], block["ids"]) == (2, 1, ["01H1", "01H2", "01H3"])
    # The memory-quality harness still tells memory lines from excerpts.
    assert [e.split("] ")[1] for e in memory_entries(block["text"])] == [
        "The user drinks tea without milk. (source: [[2026-11-29 chat#^m-12]])",
        "The user likes oat milk. (source messages: m-3)"]


def test_the_memory_that_answers_leads_the_excerpt_it_came_from(embedder):
    """Issue 33: an excerpt is ordered and shown at EXCERPT_LEAD of its search score, so a
    memory scoring half of it comes first; an excerpt that is mostly redactions, half again."""
    from vaultmem.retrieve.context import EXCERPT_LEAD, REDACTED_LEAD

    turn = hit(1, type="session", text="Alice: we finally moved to Denver, the commute is great", score=1.1,
               valid_from="2026-10-12", sources=["[[2026-10-12 chat#^m-1]]"])
    memory = hit(2, type="fact", text="The user lives in Denver.", score=0.6, valid_from="2026-10-12")
    token = hit(3, type="session", text="Alice: my token is [REDACTED:api-key] live [REDACTED:password]\n"
                                         "assistant: Thanks, I will not store it.", score=1.3,
                valid_from="2026-10-13", sources=["[[2026-10-13 chat#^m-3]]"])
    lines = build_context([token, turn, memory], budget=500, count_tokens=embedder.count_tokens)["text"].splitlines()
    assert lines[1] == "- [fact · 2026-10-12 · score 0.60] The user lives in Denver. (source messages: m-2)"
    assert lines[2].startswith(f"- [2026-10-12 · [[2026-10-12 chat#^m-1]] · score {1.1 * EXCERPT_LEAD:.2f}] ")
    assert lines[3].startswith(f"- [2026-10-13 · [[2026-10-13 chat#^m-3]] · score "
                               f"{1.3 * EXCERPT_LEAD * REDACTED_LEAD:.2f}] Alice: my token")


def test_a_line_far_below_the_best_is_left_out(embedder):
    """A line under FLOOR_SHARE of the best one answers another question: "What is the user's
    job title?" is not told that a promotion fell through, at a third of the answer's score."""
    from vaultmem.retrieve.context import FLOOR_SHARE

    title = hit(1, type="fact", text="The user is a Senior Software Engineer.", score=0.97)
    near = hit(2, type="fact", text="The user writes Go all day at work.", score=0.97 * FLOOR_SHARE + 0.01)
    far = hit(3, type="event", text="The user was not promoted to Staff Engineer this cycle.",
              score=0.97 * FLOOR_SHARE - 0.01)
    block = build_context([title, near, far], budget=500, count_tokens=embedder.count_tokens)
    assert block["ids"] == ["01H1", "01H2"] and "Staff Engineer" not in block["text"]


def test_mostly_redacted_reads_the_users_turns_only():
    from vaultmem.retrieve.context import mostly_redacted

    assert mostly_redacted("Alice: key [REDACTED:api-key] and [REDACTED:password]")
    assert not mostly_redacted("Alice: the gate code changed, it is [REDACTED:password] now, tell Sam and Ana")
    assert not mostly_redacted("Alice: we moved to Denver\nassistant: [REDACTED:password] [REDACTED:password]")


def test_an_excerpt_holding_the_answer_beats_weak_memories_under_a_small_budget(embedder):
    weak = [hit(n, text=f"The user mentioned something loosely related, number {n}.", score=0.3)
            for n in range(6)]
    answer = hit(9, type="session", score=1.02, valid_from="2026-05-07",
                 text="Caroline: I went to the LGBTQ support group yesterday.",
                 sources=["[[2023-05-08 locomo#^D1-3]]"])
    budget = embedder.count_tokens("\n".join([HEADER, "- [2026-05-07 · [[2023-05-08 locomo#^D1-3]] "
                                              "· score 1.02] " + answer.text])) + 30
    block = build_context(weak + [answer], budget=budget, count_tokens=embedder.count_tokens)
    lines = block["text"].splitlines()
    assert lines[1].endswith("Caroline: I went to the LGBTQ support group yesterday.")
    assert block["snippets"] == 1 and block["ids"][0] == "01H9"
    assert block["tokens"] <= budget


def test_two_turn_snippet_keeps_one_turn_per_line_inside_its_bullet(embedder):
    pair = hit(3, type="session", text="Alice: Any plans?\nBob: Hiking on Sunday.", valid_from="2026-11-29",
               sources=["[[2026-11-29 chat#^m-3]]", "[[2026-11-29 chat#^m-4]]"])
    block = build_context([pair], budget=500, count_tokens=embedder.count_tokens)
    assert block["text"].splitlines() == [HEADER,
                                          "- [2026-11-29 · [[2026-11-29 chat#^m-3]] · score 0.40] Alice: Any plans?",
                                          "  Bob: Hiking on Sunday."]


def test_a_long_excerpt_is_cut_so_it_leaves_room_for_the_memory_that_answers(embedder):
    from vaultmem.retrieve.context import EXCERPT_WORDS

    plan = " ".join(f"word{i}" for i in range(300))
    long_turns = hit(4, type="session", text=f"Bot: {plan}\nAlice: thanks", score=2.06, valid_from="2026-09-25",
                     sources=["[[2026-09-25 chat#^m-4]]"])
    answer = hit(5, type="fact", text="The user is on a Mediterranean diet.", score=0.95, valid_from="2026-09-25")
    block = build_context([long_turns, answer], budget=250, count_tokens=embedder.count_tokens)
    lines = block["text"].splitlines()
    assert lines[1].endswith(f"word{EXCERPT_WORDS - 2} …") and lines[2] == "  Alice: thanks"
    assert "Mediterranean" in lines[3] and block["tokens"] <= 250


def test_an_excerpt_of_a_turn_a_memory_in_the_list_says_is_left_out(embedder):
    turn = hit(6, type="session", text="Sam: my doctor put me on a Mediterranean diet", score=1.03,
               valid_from="2026-09-25", path="Memory/Sessions/2026-09-25 chat.md", source_messages=["m-6"],
               sources=["[[2026-09-25 chat#^m-6]]"])
    memory = hit(7, type="fact", text="The user's doctor put them on a Mediterranean diet.", score=0.95,
                 valid_from="2026-09-25", source_messages=["m-6"], sources=["[[Sessions/2026-09-25 chat#^m-6]]"])
    other = hit(8, type="session", text="Sam: the same message id in another chat", score=0.9,
                valid_from="2026-10-01", path="Memory/Sessions/2026-10-01 chat.md", source_messages=["m-6"],
                sources=["[[2026-10-01 chat#^m-6]]"])
    block = build_context([turn, memory, other], budget=400, count_tokens=embedder.count_tokens)
    assert block["memories"] == 1 and block["snippets"] == 1
    assert "Mediterranean" in block["text"] and "another chat" in block["text"]
    assert "Sam: my doctor" not in block["text"]


def test_each_line_is_dated_by_when_it_was_said_and_says_when_nobody_knows(embedder):
    said = hit(1, valid_from="2026-09-14")                       # extracted 2026-11-20
    undated = hit(2, type="event", text="The user starts a new job next Friday.", score=0.7,
                  tags=["vaultmem/event", "vaultmem/undated"])
    untimed_turn = hit(3, type="session", text="Alice: Hi again.", score=1.2)
    lines = build_context([said, undated, untimed_turn], budget=500,
                          count_tokens=embedder.count_tokens)["text"].splitlines()
    assert lines[1].startswith("- [preference · 2026-09-14 · score 0.80] ")
    assert lines[2].startswith("- [event · date unknown · score 0.70] The user starts a new job")
    assert lines[3].startswith("- [date unknown · [[x3]] · score 0.60] ")
    assert "2026-11-20" not in "\n".join(lines)


def test_a_memory_no_longer_current_says_until_when_and_what_superseded_it(embedder):
    moved = hit(1, type="fact", text="The user lives in Chicago.", valid_from="2026-03-02",
                valid_to="2026-10-12", superseded_by=["[[Lives in Denver]]"])
    moved.status = "superseded"
    unlinked = hit(2, type="fact", text="The user works at Initech.", score=0.7)
    unlinked.status = "superseded"
    expired = hit(3, type="event", text="The user is on leave.", score=0.6, valid_to="2026-10-01")
    current = hit(4, type="fact", text="The user lives in Denver.", score=0.5, valid_from="2026-10-12")
    block = build_context([moved, unlinked, expired, current], budget=500,
                          count_tokens=embedder.count_tokens)["text"]
    assert block.splitlines()[1:] == [
        "- [fact · 2026-03-02 · until 2026-10-12 · score 0.80] The user lives in Chicago. "
        "(superseded by [[Lives in Denver]]) (source messages: m-1)",
        "- [fact · 2026-11-20 · superseded · score 0.70] The user works at Initech. (source messages: m-2)",
        "- [event · 2026-11-20 · until 2026-10-01 · score 0.60] The user is on leave. (source messages: m-3)",
        "- [fact · 2026-10-12 · score 0.50] The user lives in Denver. (source messages: m-4)"]
    assert [bool(NOT_CURRENT.search(e)) for e in memory_entries(block)] == [True, True, True, False]


@pytest.mark.parametrize("budget", [5, 20, 40, 80, 200])
def test_block_never_exceeds_the_budget(embedder, budget):
    hits = [hit(n, text=f"Memory number {n} says something fairly long about tea and coffee.")
            for n in range(12)]
    block = build_context(hits, budget=budget, count_tokens=embedder.count_tokens)
    assert block["tokens"] == embedder.count_tokens(block["text"]) <= budget
    assert block["memories"] == block["text"].count("\n- ") + block["text"].startswith("- ")


def test_no_hits_says_so_instead_of_padding(embedder):
    assert build_context([], budget=100, count_tokens=embedder.count_tokens)["text"] == NO_MEMORIES


def test_a_chinese_question_gets_a_chinese_block_with_the_same_markers(embedder):
    old = hit(1, type="fact", text="用户住在成都。", score=0.7, valid_to="2026-10-12",
              superseded_by=["[[用户住在厦门]]"])
    old.status = "superseded"
    undated = hit(2, type="session", text="用户: 我们下个月搬家", score=0.6, sources=["[[chat#^m-2]]"])
    block = build_context([old, undated], budget=300, count_tokens=embedder.count_tokens, lang="zh")
    lines = block["text"].splitlines()
    assert lines[0] == "## 相关记忆（最相关的在前）"
    assert lines[1].startswith("- [fact · 2026-11-20 · until 2026-10-12 · score 0.70] 用户住在成都。")
    assert "(superseded by [[用户住在厦门]])" in lines[1] and NOT_CURRENT.search(memory_entries(block["text"])[0])
    assert lines[2].startswith("- [日期不详 · [[chat#^m-2]]")
    assert build_context([], budget=100, count_tokens=embedder.count_tokens, lang="zh")["text"] == "没有相关的记忆。"


def test_api_context_for_a_question(memory):
    result = memory.context("What does the user drink?", budget=120)
    assert result["tokens"] <= 120 and result["memories"] >= 2
    assert "The user is cutting back on coffee" in result["text"]
    scores = [float(line.rsplit("score ", 1)[1].split("]")[0])
              for line in result["text"].splitlines() if line.startswith("- [")]
    assert scores == sorted(scores, reverse=True) and len(scores) >= 2
    assert memory.context("How do I change a car tyre?")["text"] == NO_MEMORIES
    chinese = memory.context("用户喝什么？")["text"]   # the question's language, either way
    assert chinese.startswith("## 相关记忆（最相关的在前）\n- [") or chinese == "没有相关的记忆。"


def test_cli_context_prints_the_block(memory):
    from click.testing import CliRunner

    from vaultmem.cli import cli

    result = CliRunner().invoke(cli, ["--vault", str(memory.vault.root), "context",
                                      "Who is the user's partner?", "--budget", "60"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(HEADER + "\n- [")
    assert "Mei" in result.stdout


# --- a change of address, seen before and after it (notes as the extractor writes them) ----
@pytest.fixture
def moved(tmp_path, monkeypatch, embedder):
    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T12:00:00")
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    extracted = {"created": "2026-11-30T10:00:00", "updated": "2026-11-30T10:00:00"}
    write_note(root, "Memory/Facts/Lives in Chicago.md",
               memory_meta("01OLD", status="superseded", valid_from="2026-03-02", valid_to="2026-10-12",
                           superseded_by=["[[Lives in Denver]]"], **extracted),
               "The user lives in Chicago.")
    write_note(root, "Memory/Facts/Lives in Denver.md",
               memory_meta("01NEW", valid_from="2026-10-12", supersedes=["[[Lives in Chicago]]"],
                           **extracted),
               "The user lives in Denver.")
    mem = Memory(root, embedder=embedder)
    mem.reindex()
    return mem


def test_context_as_of_gives_the_old_value_before_a_change_and_the_new_after(moved):
    before = moved.context("Where does the user live?", as_of="2026-09-20")["text"]
    assert "Chicago" in before and "lives in Denver" not in before
    line = next(e for e in memory_entries(before) if "Chicago" in e)
    assert line.startswith("- [fact · 2026-03-02 · until 2026-10-12 · score ")
    assert "(superseded by [[Lives in Denver]])" in line
    after = moved.context("Where does the user live?", as_of="2026-11-01")["text"]
    assert "Denver" in after and "Chicago" not in after
    now = moved.context("Where does the user live?")["text"]
    assert memory_entries(now)[0].startswith("- [fact · 2026-10-12 · score ")   # said, not extracted
    assert "Chicago" not in now and "2026-11-30" not in now


def test_context_all_shows_the_old_value_labelled_beside_the_current_one(moved):
    entries = memory_entries(moved.context("Where does the user live?", all=True)["text"])
    assert sorted(("lives in Denver" in e, bool(NOT_CURRENT.search(e))) for e in entries) == [
        (False, True), (True, False)]


def test_cli_context_as_of(moved):
    from click.testing import CliRunner

    from vaultmem.cli import cli

    result = CliRunner().invoke(cli, ["--vault", str(moved.vault.root), "context",
                                      "Where does the user live?", "--as-of", "2026-09-20", "--json"])
    assert result.exit_code == 0, result.output
    text = json.loads(result.stdout)["text"]
    assert "until 2026-10-12" in text and "lives in Denver" not in text
    bad = CliRunner().invoke(cli, ["--vault", str(moved.vault.root), "context", "x", "--as-of", "soon"])
    assert bad.exit_code != 0 and "YYYY-MM-DD" in bad.output


def test_health_is_pinned_under_its_own_heading_within_a_third_of_the_budget(embedder):
    """Issue 16: a severe peanut allergy was absent from the context for "plan dinner for the
    user". Health memories of weight 0.9 follow the ranked lines whatever the question."""
    allergy = hit(7, type="fact", text="The user has a severe peanut allergy, like EpiPen-level.", score=0.05,
                  importance=0.9, tags=["health"])
    tagged_lightly = hit(8, text="The user is cutting back on coffee.", score=0.02, importance=0.8, tags=["health"])
    block = build_context([hit(2)], budget=300, count_tokens=embedder.count_tokens, pinned=[allergy, tagged_lightly])
    lines = block["text"].splitlines()
    assert lines[0] == HEADER and lines[1].endswith("The user drinks tea without milk. (source messages: m-2)")
    assert lines[2:] == [PINNED_HEADER, "- [fact · 2026-11-20 · score 0.05] The user has a severe peanut allergy, "
                                        "like EpiPen-level. (source messages: m-7)"]
    assert (block["memories"], block["pinned"], block["ids"]) == (1, 1, ["01H2", "01H7"])
    # with nothing relevant, the pinned lines stand alone (no "No relevant memories." above them)
    alone = build_context([], budget=300, count_tokens=embedder.count_tokens, pinned=[allergy])
    assert alone["text"].splitlines()[0] == PINNED_HEADER
    # a budget too small for it leaves it out rather than overflowing
    small = build_context([hit(2)], budget=60, count_tokens=embedder.count_tokens, pinned=[allergy])
    assert PINNED_HEADER not in small["text"] and small["tokens"] <= 60


def test_a_question_about_food_keeps_room_for_health_and_others_do_not(embedder):
    allergy = hit(7, type="fact", text="The user has a severe peanut allergy, like EpiPen-level.", score=0.05,
                  importance=0.9, tags=["health"])
    many = [hit(n, text=f"The user mentioned a loosely related thing, number {n}.", score=0.5) for n in range(20, 40)]
    budget = 200
    food = build_context(many, budget=budget, count_tokens=embedder.count_tokens, pinned=[allergy], care=True)
    assert "severe peanut allergy" in food["text"].split(PINNED_HEADER)[1] and food["tokens"] <= budget
    other = build_context(many, budget=budget, count_tokens=embedder.count_tokens, pinned=[allergy])
    assert PINNED_HEADER not in other["text"] and other["memories"] > food["memories"]


def test_plan_dinner_shows_the_allergy_from_a_real_vault(tmp_path, embedder, monkeypatch):
    from vaultmem import api

    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T10:00:00")
    root = copy_sample_vault(tmp_path / "vault")
    api.init(root)
    mem = Memory(root, embedder=embedder)
    mem.reindex()
    added = mem.add("The user has a severe peanut allergy, like EpiPen-level.", tags=["health"], importance=0.9)
    assert added["action"] == "created"
    text = mem.context("plan dinner for the user", budget=400)["text"]
    assert PINNED_HEADER in text and "severe peanut allergy" in text.split(PINNED_HEADER)[1]
    # a note a person tagged #health at 0.8 stays ranked like any other
    assert "Cutting back on coffee" not in text.split(PINNED_HEADER)[1]


def test_tokens_are_counted_past_the_models_window(embedder):
    """The embedding tokenizer stops at the model's 256 tokens; a budget counted with it let a
    block of any length through once it passed 256 (issue 49)."""
    assert embedder.count_tokens("word " * 1000) >= 1000


@pytest.mark.parametrize("budget", [300, 600, 1500])
def test_a_large_budget_is_kept_too(embedder, budget):
    hits = [hit(n, text=" ".join(f"tea{n}w{i}" for i in range(60))) for n in range(40)]
    block = build_context(hits, budget=budget, count_tokens=embedder.count_tokens)
    assert block["tokens"] == embedder.count_tokens(block["text"]) <= budget
    assert block["tokens"] > budget * 0.8     # and filled, not cut at the model's window


LIST = " ".join(f"Bottle {i}: spirit{i} for the bar." for i in range(1, 60))   # ~420 words


def long_turn_hit():
    """An excerpt of the first words of a long assistant turn, as search shows it."""
    return hit(7, type="session", text="assistant: " + " ".join(LIST.split()[:40]), score=1.2,
               valid_from="2026-09-25", sources=["[[2026-09-25 chat#^m-7]]"])


def test_what_the_budget_leaves_widens_an_excerpt_to_its_whole_turn(embedder):
    turns = lambda h: [("assistant", LIST)] if h.id == "01H7" else None  # noqa: E731
    memory = hit(8, type="fact", text="The user is stocking a home cocktail bar.", score=0.5)
    narrow = build_context([long_turn_hit(), memory], budget=2000, count_tokens=embedder.count_tokens)
    assert "spirit40" not in narrow["text"]
    wide = build_context([long_turn_hit(), memory], budget=2000, count_tokens=embedder.count_tokens, turns=turns)
    assert "spirit40" in wide["text"] and wide["tokens"] <= 2000
    assert (wide["memories"], wide["snippets"]) == (narrow["memories"], narrow["snippets"]) == (1, 1)
    tight = build_context([long_turn_hit(), memory], budget=450, count_tokens=embedder.count_tokens, turns=turns)
    assert tight["tokens"] <= 450 and "stocking a home cocktail bar" in tight["text"]
    assert tight["text"].count("spirit") > narrow["text"].count("spirit")   # the smaller window fits
    gone = build_context([long_turn_hit()], budget=2000, count_tokens=embedder.count_tokens,
                         turns=lambda h: (_ for _ in ()).throw(OSError("note gone")))
    assert gone["text"] == build_context([long_turn_hit()], budget=2000, count_tokens=embedder.count_tokens)["text"]


def test_context_widens_a_long_turn_from_its_session_note(tmp_path, embedder, monkeypatch):
    from tests.helpers.transcripts import write_jsonl
    from vaultmem import api

    monkeypatch.setenv("VAULTMEM_NOW", "2026-11-30T12:00:00")
    root = tmp_path / "vault"
    api.init(root)
    transcript = write_jsonl(tmp_path / "bar.jsonl", "bar", [
        ("user", "Which bottles should I buy for my home cocktail bar?"),
        ("assistant", "Here is a list for a home cocktail bar. " + LIST)], speaker="user")
    memory = Memory(root, embedder=embedder)
    assert not memory.extract([transcript], format="jsonl").get("errors")
    question = "Which bottles did you list for my home cocktail bar?"
    small, large = memory.context(question, budget=150), memory.context(question, budget=1500)
    assert small["tokens"] <= 150 < large["tokens"] <= 1500
    assert "spirit50" in large["text"] and "spirit50" not in small["text"]


def test_a_widened_excerpt_starts_a_little_before_the_part_that_matched():
    from vaultmem.retrieve.context import WIDE_BEFORE, _window

    turn = " ".join(f"w{i}" for i in range(1000))
    assert _window("assistant", turn, "assistant: w500 w501 w502 w503", 100).startswith(
        f"assistant: … w{500 - WIDE_BEFORE} ")
    assert _window("assistant", turn, "assistant: w10 w11 w12", 100).startswith("assistant: w0 ")
    assert _window("assistant", turn, "assistant: nowhere to be found", 50).endswith("w49 …")


# ---- every line earns its place (issue 50) -------------------------------------------------

def pair(n, first, second, score, session="Memory/Sessions/2026-12-01 ci.md"):
    """A sliding-window excerpt of turns m-n and m-(n+1) of one session, as search gives it."""
    return hit(n, type="session", text=f"{first}\n{second}", score=score, valid_from="2026-12-01", path=session,
               source_messages=[f"m-{n}", f"m-{n + 1}"],
               sources=[f"[[2026-12-01 ci#^m-{n}]]", f"[[2026-12-01 ci#^m-{n + 1}]]"])


TURNS = ["user: I'm Priya, from now on always run ruff before you commit.",
         "assistant: Got it, Priya. I'll run ruff before every commit.",
         "user: Also, we moved the CI from Jenkins to GitHub Actions last week.",
         "assistant: I see ci.yml under .github/workflows."]


def test_a_hub_that_says_nothing_gets_no_line_but_one_the_person_wrote_in_does(embedder):
    hub = hit(1, type="entity", title="Acme", text="Acme Hub note: memories that mention Acme link here (see backlinks).",
              score=0.9)
    written = hit(2, type="entity", title="Harbor", score=0.85,
                  text="Harbor Hub note: memories that mention Harbor link here (see backlinks).\n"
                       "Harbor is the billing team's staging cluster, owned by Dana.")
    fact = hit(3, type="fact", text="The user maintains the billing service at Acme.", score=0.8)
    block = build_context([hub, written, fact], budget=400, count_tokens=embedder.count_tokens)
    assert "Acme Hub note" not in block["text"] and "staging cluster" in block["text"]
    assert "01H1" not in block["ids"] and block["memories"] == 2


def test_an_excerpt_leaves_out_the_turns_a_shown_memory_cites_and_overlapping_ones_merge(embedder):
    procedure = hit(9, type="procedure", text="The user's standing instruction: always run ruff before you commit.",
                    score=0.9, source_messages=["m-0"], sources=["[[Sessions/2026-12-01 ci#^m-0]]"])
    windows = [pair(0, TURNS[0], TURNS[1], 1.2), pair(1, TURNS[1], TURNS[2], 1.1), pair(2, TURNS[2], TURNS[3], 1.0)]
    block = build_context([procedure, *windows], budget=600, count_tokens=embedder.count_tokens)
    lines = block["text"].splitlines()
    assert block["snippets"] == 1 and block["memories"] == 1
    assert lines[2:] == ["- [2026-12-01 · [[2026-12-01 ci#^m-1]] · score 0.60] " + TURNS[1],
                         "  " + TURNS[2], "  " + TURNS[3]]        # once each, in the order said
    assert "I'm Priya" not in block["text"].split("\n", 2)[2]    # the memory says that turn
    # found the other way round (the later window first), the turns keep the order they were said
    backwards = build_context([procedure, *reversed(windows)], budget=600, count_tokens=embedder.count_tokens)
    assert backwards["text"].splitlines()[2:] == ["- [2026-12-01 · [[2026-12-01 ci#^m-1]] · score 0.60] " + TURNS[1],
                                                  "  " + TURNS[2], "  " + TURNS[3]]
    # windows of another session with the same message ids are not the same turns
    other = pair(1, "user: In the other chat, we use CircleCI.", "assistant: Noted.", 1.05,
                 session="Memory/Sessions/2026-11-02 other.md")
    both = build_context([procedure, *windows, other], budget=600, count_tokens=embedder.count_tokens)
    assert both["snippets"] == 2 and "CircleCI" in both["text"]


def test_a_memory_left_out_for_room_does_not_hide_the_turn_it_cites(embedder):
    """The turns a memory cites leave an excerpt only when that memory is shown."""
    window = pair(2, TURNS[2], TURNS[3], 1.6)
    ci = hit(8, type="event", text="The user moved the CI from Jenkins to GitHub Actions. " + "Detail " * 200,
             score=0.7, source_messages=["m-2"], sources=["[[Sessions/2026-12-01 ci#^m-2]]"])
    budget = embedder.count_tokens("\n".join([HEADER, window.text])) + 40
    block = build_context([window, ci], budget=budget, count_tokens=embedder.count_tokens)
    assert block["memories"] == 0 and "GitHub Actions last week" in block["text"]


def test_a_merged_excerpt_widens_each_of_its_turns_once(embedder):
    whole = {f"m-{i}": tuple(t.split(": ", 1)) for i, t in enumerate(TURNS)}
    whole["m-2"] = ("user", TURNS[2].split(": ", 1)[1] + " " + " ".join(f"step{i}" for i in range(80)))

    def turns(h):
        return [whole[m] for m in h.source_messages]

    windows = [pair(1, TURNS[1], TURNS[2], 1.1), pair(2, TURNS[2], TURNS[3], 1.0)]
    block = build_context(windows, budget=1000, count_tokens=embedder.count_tokens, turns=turns)
    text = block["text"]
    assert block["snippets"] == 1 and "step79" in text and text.count("GitHub Actions") == 1


def test_an_excerpt_with_a_neighbours_words_merges_with_the_window_of_that_neighbour(embedder):
    """A hit whose lines are not one a turn (a long neighbour lends its words) still shares a
    line with the next window: one excerpt, that line once."""
    lent = hit(1, type="session", score=1.2, valid_from="2026-03-26", path="Memory/Sessions/2026-03-26 s3.md",
               text=f"{TURNS[0]}\n{TURNS[1]}\n{TURNS[2]}", source_messages=["m-0", "m-1"],
               sources=["[[2026-03-26 s3#^m-0]]", "[[2026-03-26 s3#^m-1]]"])
    window = hit(2, type="session", score=1.1, valid_from="2026-03-26", path="Memory/Sessions/2026-03-26 s3.md",
                 text=f"{TURNS[2]}\n{TURNS[3]}", source_messages=["m-2", "m-3"],
                 sources=["[[2026-03-26 s3#^m-2]]", "[[2026-03-26 s3#^m-3]]"])
    block = build_context([lent, window], budget=600, count_tokens=embedder.count_tokens)
    assert block["snippets"] == 1 and block["text"].count("GitHub Actions") == 1
    assert block["text"].splitlines()[1:] == ["- [2026-03-26 · [[2026-03-26 s3#^m-0]] · score 0.60] " + TURNS[0],
                                              *("  " + t for t in TURNS[1:])]


def test_a_window_between_two_shown_excerpts_joins_them_into_one(embedder):
    first, last = pair(0, TURNS[0], TURNS[1], 1.3), pair(2, TURNS[2], TURNS[3], 1.2)
    middle = pair(1, TURNS[1], TURNS[2], 1.1)
    memory = hit(9, type="fact", text="The user's CI runs on GitHub Actions.", score=0.5)
    block = build_context([first, last, middle, memory], budget=600, count_tokens=embedder.count_tokens)
    lines = block["text"].splitlines()
    assert block["snippets"] == 1 and block["memories"] == 1
    assert lines[1:5] == ["- [2026-12-01 · [[2026-12-01 ci#^m-0]] · score 0.65] " + TURNS[0],
                          *("  " + t for t in TURNS[1:])]
    assert lines[5].startswith("- [fact")


def test_a_turn_over_several_lines_is_still_left_out_when_a_memory_shown_says_it(embedder):
    """A turn written over several lines makes a hit's lines outnumber its turns; read from the
    session note, each line is still known by its turn."""
    said = "user: My setup:\n- laptop: ThinkPad X1\n- editor: Helix"
    window = hit(1, type="session", score=1.2, valid_from="2026-12-01", path="Memory/Sessions/2026-12-01 ci.md",
                 text=f"{said}\nassistant: Nice, a keyboard-first setup.", source_messages=["m-0", "m-1"],
                 sources=["[[2026-12-01 ci#^m-0]]", "[[2026-12-01 ci#^m-1]]"])
    memory = hit(9, type="fact", text="The user edits code in Helix on a ThinkPad X1.", score=0.9,
                 source_messages=["m-0"], sources=["[[Sessions/2026-12-01 ci#^m-0]]"])
    whole = {"m-0": ("user", "My setup:\n- laptop: ThinkPad X1\n- editor: Helix"),
             "m-1": ("assistant", "Nice, a keyboard-first setup.")}
    block = build_context([window, memory], budget=600, count_tokens=embedder.count_tokens,
                          turns=lambda h: [whole[m] for m in h.source_messages])
    assert "ThinkPad X1\n" not in block["text"].split("(source:")[-1] and "keyboard-first" in block["text"]
    assert block["text"].count("ThinkPad X1") == 1
    unread = build_context([window, memory], budget=600, count_tokens=embedder.count_tokens)
    assert unread["text"].count("ThinkPad X1") == 2          # without the note, the lines stay whole


# ---- the review's cases (issue 50) --------------------------------------------------------

def window(ids, lines, score, session="Memory/Sessions/2026-12-01 ci.md", n=None):
    name = session.rsplit("/", 1)[-1][:-3]
    return hit(n if n is not None else ids[0], type="session", text="\n".join(lines), score=score,
               valid_from="2026-12-01", path=session, source_messages=[f"m-{i}" for i in ids],
               sources=[f"[[{name}#^m-{i}]]" for i in ids])


def words(text):
    return len(text.split())


def test_an_empty_hub_neither_takes_a_line_nor_sets_the_floor():
    hub = hit(1, type="entity", text="Acme Hub note: memories that mention Acme link here (see backlinks).", score=2.0)
    fact = hit(2, type="fact", text="The user maintains the billing service at Acme.", score=0.5)
    assert "billing service" in build_context([hub, fact], 400, words)["text"]
    assert build_context([hub], 400, words)["text"] == NO_MEMORIES


def test_the_same_words_in_two_known_turns_are_two_turns():
    a = window([2, 3], ["user: Shall I deploy the billing service tonight?", "assistant: Sure."], 1.2)
    b = window([9, 10], ["assistant: Sure.", "user: The DB password rotation is on Friday."], 1.1)
    assert build_context([a, b], 400, words)["snippets"] == 2


def test_a_memory_from_two_sessions_hides_only_the_turns_it_cites():
    memory = hit(8, type="fact", text="The user lives in Denver.", score=0.9, source_messages=["m-1", "m-4"],
                 sources=["[[2026-11-02 a#^m-1]]", "[[2026-12-01 ci#^m-4]]"])
    jo = window([1, 2], ["user: My sister Jo is visiting from Lisbon on Friday.", "assistant: Have a good visit."], 1.2)
    assert "sister Jo" in build_context([memory, jo], 400, words)["text"]


def test_a_health_line_shown_is_not_shown_again_as_an_excerpt():
    turn = window([5, 6], ["user: I'm allergic to peanuts, badly.", "assistant: Noted, no peanuts in the plan."], 2.0)
    allergy = hit(9, type="fact", text="The user has a severe peanut allergy.", score=0.3, importance=0.95,
                  tags=["health"], source_messages=["m-5"], sources=["[[2026-12-01 ci#^m-5]]"])
    for care in (True, False):
        text = build_context([turn], 400, words, pinned=[allergy], care=care)["text"]
        assert ("allergic to peanuts, badly" in text) + ("severe peanut allergy" in text) == 1, text


def test_an_excerpt_links_to_a_turn_it_shows_and_widens_each_part_it_shows():
    ruff = hit(9, type="procedure", text="The user's standing instruction: always run ruff.", score=0.9,
               source_messages=["m-0", "m-1"], sources=["[[2026-12-01 ci#^m-0]]", "[[2026-12-01 ci#^m-1]]"])
    lent = window([0, 1], ["user: Always run ruff.", "assistant: Will do.", "user: Also, we moved the CI last week."], 1.2)
    whole = {"m-0": ("user", "Always run ruff."), "m-1": ("assistant", "Will do.")}
    text = build_context([ruff, lent], 400, words, turns=lambda h: [whole.get(m) for m in h.source_messages])["text"]
    assert "moved the CI" in text and "ci#^m-0]] · score" not in text
    long = " ".join(f"w{i}" for i in range(500)) + " By the way my dermatologist is Dr. Lee at Harbor Clinic."
    turn = window([3, 4], ["user: " + long, "assistant: Noted."], 1.2)
    aside = window([3], ["user: By the way my dermatologist is Dr. Lee at Harbor Clinic."], 1.1, n=30)
    said = {"m-3": ("user", long), "m-4": ("assistant", "Noted.")}
    block = build_context([turn, aside], 3000, words, turns=lambda h: [said[m] for m in h.source_messages])
    assert block["snippets"] == 1 and "Dr. Lee" in block["text"] and "w0 w1" in block["text"]
