import pytest
from conftest import copy_sample_vault

from vaultmem.api import Memory
from vaultmem.context import NO_MEMORIES, build_context
from vaultmem.search import Hit


@pytest.fixture(scope="module")
def memory(tmp_path_factory, embedder):
    mem = Memory(copy_sample_vault(tmp_path_factory.mktemp("context") / "vault"), embedder=embedder)
    mem.reindex()
    return mem


def hit(n, type="preference", text="The user drinks tea without milk.", score=0.8, **extra):
    return Hit(id=f"01H{n}", path=f"Memory/x{n}.md", type=type, title=f"x{n}", text=text,
               score=score, status="active", created="2026-11-20T19:45:00",
               updated="2026-11-20T19:45:00", source_messages=[f"m-{n}"], **extra)


def test_memories_come_before_session_snippets_with_type_date_score_and_link(embedder):
    hits = [hit(1, type="session", text="Alice: I drink too much coffee.", score=0.9,
                sources=["[[2026-11-29 chat#^m-11]]"]),
            hit(2, sources=["[[2026-11-29 chat#^m-12]]"])]
    block = build_context(hits, budget=500, count_tokens=embedder.count_tokens)
    lines = block["text"].splitlines()
    assert lines[0] == "## Relevant memories"
    assert lines[1] == ("- [preference · 2026-11-20 · score 0.80] The user drinks tea without milk. "
                        "(source: [[2026-11-29 chat#^m-12]])")
    assert lines[2] == "## Conversation excerpts"
    assert lines[3] == "- [2026-11-20 · [[2026-11-29 chat#^m-11]]] Alice: I drink too much coffee."
    assert (block["memories"], block["snippets"], block["ids"]) == (1, 1, ["01H2", "01H1"])


def test_two_turn_snippet_keeps_one_turn_per_line_inside_its_bullet(embedder):
    pair = hit(3, type="session", text="Alice: Any plans?\nBob: Hiking on Sunday.",
               sources=["[[2026-11-29 chat#^m-3]]", "[[2026-11-29 chat#^m-4]]"])
    block = build_context([pair], budget=500, count_tokens=embedder.count_tokens)
    assert block["text"].splitlines() == ["## Conversation excerpts",
                                          "- [2026-11-20 · [[2026-11-29 chat#^m-3]]] Alice: Any plans?",
                                          "  Bob: Hiking on Sunday."]


@pytest.mark.parametrize("budget", [5, 20, 40, 80, 200])
def test_block_never_exceeds_the_budget(embedder, budget):
    hits = [hit(n, text=f"Memory number {n} says something fairly long about tea and coffee.")
            for n in range(12)]
    block = build_context(hits, budget=budget, count_tokens=embedder.count_tokens)
    assert block["tokens"] == embedder.count_tokens(block["text"]) <= budget
    assert block["memories"] == block["text"].count("\n- ") + block["text"].startswith("- ")


def test_no_hits_says_so_instead_of_padding(embedder):
    assert build_context([], budget=100, count_tokens=embedder.count_tokens)["text"] == NO_MEMORIES


def test_api_context_for_a_question(memory):
    result = memory.context("What does the user drink?", budget=120)
    assert result["tokens"] <= 120 and result["memories"] >= 2
    assert "The user is cutting back on coffee" in result["text"]
    assert memory.context("How do I change a car tyre?")["text"] == NO_MEMORIES


def test_cli_context_prints_the_block(memory):
    from click.testing import CliRunner

    from vaultmem.cli import cli

    result = CliRunner().invoke(cli, ["--vault", str(memory.vault.root), "context",
                                      "Who is the user's partner?", "--budget", "60"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## Relevant memories\n- [")
    assert "Mei" in result.stdout
