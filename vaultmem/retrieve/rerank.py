"""An optional second stage: the LLM of `[llm]` reorders the first stage's top hits by how well
each helps answer the question (listwise: one request sees them all).

Off by default (`[search] rerank = ""`): with the local model of `benchmarks/llm_server.md`
(Qwen2.5-Coder-1.5B on one thread) it cost 20 s a query and gained nothing, since that model
returns the order it was given (benchmarks/README.md, issue 35). A person with a stronger
endpoint turns it on with `[search] rerank = "llm"` or `search --rerank llm`.

    >>> parse_ranking('{"ranking": [3, 1, 3, 9]}', count=4)
    [2, 0]

The model's order comes first, then the hits it left out in the first stage's order. A hit's
`score` stays the first stage's and `parts["rerank"]` holds the place the model gave it, so
with the stage on the order, not the score, is the ranking. When the endpoint fails or answers
with no usable ranking, the first stage's order stands and the result's `warning` says why.
"""

from __future__ import annotations

import json

from vaultmem.retrieve.hits import Hits

RERANK_CANDIDATES = 20   # the first stage's hits the model sees
PASSAGE_CHARS = 300      # each shown up to this long (a prompt of 20 stays within ~2,000 tokens)
REPLY_TOKENS = 120
SYSTEM = ("You rank passages from a person's memory by how well they help answer a question. "
          'Reply with JSON only: {"ranking": [passage numbers, most helpful first]}. '
          "Include every passage that helps; leave out the ones that do not.")


def rerank_messages(question: str, hits) -> list[dict]:
    """The chat request: the question and the hits' texts, numbered from 1."""
    lines = []
    for n, hit in enumerate(hits, 1):
        text = " ".join(hit.text.split())
        if len(text) > PASSAGE_CHARS:
            text = text[:PASSAGE_CHARS] + "…"
        lines.append(f"[{n}] {text}")
    user = f"Question: {question}\n\nPassages:\n" + "\n".join(lines) + "\n\nJSON:"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_ranking(reply: str, count: int) -> list[int]:
    """The 0-based positions the reply ranks, best first: numbers 1..count, each once. A
    ValueError when the reply is not that JSON or ranks none of the passages."""
    try:
        data = json.loads(reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"the model's reply is not JSON ({exc.msg})") from None
    ranking = data.get("ranking") if isinstance(data, dict) else data
    if not isinstance(ranking, list):
        raise ValueError('the model\'s reply has no "ranking" list')
    positions = []
    for value in ranking:
        if isinstance(value, bool):
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            continue
        if 1 <= number <= count and number - 1 not in positions:
            positions.append(number - 1)
    if not positions:
        raise ValueError("the model ranked none of the passages")
    return positions


def llm_rerank(question: str, hits: Hits, chat) -> Hits:
    """`hits` reordered by the model; `chat(messages, max_tokens)` returns its reply text (it
    raises `LLMError` when the endpoint fails). The first RERANK_CANDIDATES are shown; the
    rest keep their places after them."""
    from vaultmem.errors import LLMError

    shown = list(hits[:RERANK_CANDIDATES])
    if len(shown) < 2:
        return hits
    try:
        order = parse_ranking(chat(rerank_messages(question, shown), REPLY_TOKENS), len(shown))
    except (LLMError, ValueError) as exc:
        kept = Hits(hits)
        kept.warning = "; ".join(x for x in (hits.warning, f"the LLM rerank failed ({exc}); "
                                                             "hits are in the first stage's order") if x)
        return kept
    for place, position in enumerate(order, 1):
        shown[position].parts = dict(shown[position].parts or {}, rerank=place)
    ranked = set(order)
    result = Hits([shown[p] for p in order] + [h for p, h in enumerate(shown) if p not in ranked]
                  + list(hits[RERANK_CANDIDATES:]))
    result.warning = hits.warning
    return result
