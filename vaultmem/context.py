"""A prompt-ready memory block for a question, within a token budget.

    >>> print(build_context(hits, budget=300, count_tokens=embedder.count_tokens))  # doctest: +SKIP
    ## Relevant memories
    - [preference · 2026-11-29 · score 0.62] The user is cutting back on coffee. (source: [[2026-11-29 chat#^m-12]])
    ## Conversation excerpts
    - [2026-11-29 · [[2026-11-29 chat#^m-13]]] Alice: my doctor told me to cut down.

Memories come first (highest score first), session snippets after them. An entry that does
not fit the remaining budget is skipped, so the block never exceeds the budget. With no
hit above the search threshold the block says so instead of padding with weak hits.
"""

from __future__ import annotations

NO_MEMORIES = "No relevant memories."
MEMORY_HEADER = "## Relevant memories"
SNIPPET_HEADER = "## Conversation excerpts"


def _date(hit) -> str:
    return (hit.created or hit.updated or "")[:10]


def memory_line(hit) -> str:
    meta = " · ".join(x for x in (hit.type, _date(hit), f"score {hit.score:.2f}") if x)
    line = f"- [{meta}] {hit.text}"
    if hit.sources:
        line += f" (source: {', '.join(hit.sources[:2])})"
    elif hit.source_messages:
        line += f" (source messages: {', '.join(hit.source_messages[:3])})"
    return line


def snippet_line(hit) -> str:
    where = hit.sources[0] if hit.sources else f"[[{hit.title}]]"
    # A snippet of several turns keeps one turn per line, indented to stay in its bullet.
    return f"- [{_date(hit)} · {where}] " + "\n  ".join(hit.text.splitlines())


def build_context(hits, budget: int, count_tokens) -> dict:
    """Render `hits` (search.Hit) into a block of at most `budget` tokens.

    `count_tokens(text) -> int` is the embedding model's tokenizer (or an equivalent).
    Returns `{"text", "tokens", "memories", "snippets", "ids"}`; `ids` are the note ids shown.
    """
    memories = [h for h in hits if h.type != "session"]
    snippets = [h for h in hits if h.type == "session"]
    if not hits:
        text = NO_MEMORIES if count_tokens(NO_MEMORIES) <= budget else ""
        return {"text": text, "tokens": count_tokens(text) if text else 0,
                "memories": 0, "snippets": 0, "ids": []}

    lines: list[str] = []
    shown = {"memories": 0, "snippets": 0}
    ids: list[str] = []

    def fits(candidate: list[str]) -> bool:
        return count_tokens("\n".join(candidate)) <= budget

    for header, group, render, key in ((MEMORY_HEADER, memories, memory_line, "memories"),
                                       (SNIPPET_HEADER, snippets, snippet_line, "snippets")):
        started = False
        for hit in group:
            entry = render(hit)
            candidate = lines + ([header] if not started else []) + [entry]
            if not fits(candidate):
                continue
            lines = candidate
            started = True
            shown[key] += 1
            ids.append(hit.id)
    text = "\n".join(lines)
    return {"text": text, "tokens": count_tokens(text) if text else 0,
            "memories": shown["memories"], "snippets": shown["snippets"],
            "ids": list(dict.fromkeys(ids))}
