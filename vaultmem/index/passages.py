"""Chunk vectors: one vector per chunk (`chunk_vectors`), a session's turns encoded about once,
in passages of consecutive turns, each chunk pooled from its own tokens; with a multilingual
model, a chunk shown with neighbour turns averaged with its text as shown.
"""

from __future__ import annotations


def chunk_vectors(embedder, chunks):
    """One vector per chunk, of its `search_text` (the turns shown and their neighbours).

    A session chunk's text overlaps its neighbours' (turns 1-2 with 0 and 3, turns 2-3 with 1
    and 4...), so embedding each on its own encoded every turn about four times. With a model
    that gives token embeddings (all-MiniLM-L6-v2 in either runtime), a session's turns are
    encoded about once, in passages of consecutive turns (`_passages`), and a chunk's vector
    is the mean of the token embeddings of its own text (its neighbours' first words
    included), each turn's tokens taken from the passage where that turn has the most
    context. LoCoMo dev (231 questions, one is 0.43 points): R@10 82.4 embedding each chunk
    alone, 83.0 so, with 46 % of the tokens (36 % of the index time).
    Tried and measured: averaging per-turn vectors 80.8-81.1; pooling the shown turns only
    79.4; every chunk's turns whole in one passage (three turns shared) 82.7 at 74 % of the
    tokens; passages of 160 tokens 81.4, of 400 79.4.

    With a multilingual model a chunk shown with neighbour turns is embedded twice, as shown
    and with the neighbours, and the two vectors are averaged: the neighbours say what a bare
    "上周六提的" is about, the shown turns keep its point from being averaged away by them.
    LoCoMo-zh R@10 with use-multilingual-v3: 66.6 -> 69.3 (LoCoMo dev 80.7 -> 80.5). It costs
    a second encode of those chunks, which that model does ten times faster than MiniLM's
    one."""
    import numpy as np

    vectors = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
    alone = list(range(len(chunks)))
    if getattr(embedder, "pools_spans", False):
        alone = _in_context(embedder, chunks, vectors)
    if alone:
        vectors[alone] = embedder.encode([chunks[n].search_text for n in alone])
    if not getattr(embedder, "multilingual", False):
        return vectors
    framed = [n for n, chunk in enumerate(chunks)
              if chunk.type == "session" and chunk.text != chunk.search_text]
    if framed:
        summed = vectors[framed] + embedder.encode([chunks[n].text for n in framed])
        vectors[framed] = summed / np.maximum(np.linalg.norm(summed, axis=1, keepdims=True), 1e-12)
    return vectors


# Tokens a passage of turns may hold, below the model's limit: room for its special tokens
# and for a tokenizer that counts a line's joins differently.
PASSAGE_MARGIN = 16
# Consecutive passages share this many turns, so that no turn is read only at a passage's
# edge, with nothing on one side of it (LoCoMo dev R@10 with 0, 1, 2 shared: 81.9, 83.0, 81.8).
PASSAGE_OVERLAP = 1


def _in_context(embedder, chunks, vectors) -> list[int]:
    """Fill `vectors` for the session chunks whose turns fit passages of their note's turns;
    return the positions of the others (not session chunks, or a turn too long for a
    passage: embedded alone, as before)."""
    by_note: dict[int, list[int]] = {}
    alone = []
    for n, chunk in enumerate(chunks):
        if chunk.window is None:
            alone.append(n)
        else:
            by_note.setdefault(id(chunk.window.lines), []).append(n)
    texts, spans, owners = [], [], []
    budget = max(32, embedder.max_tokens - PASSAGE_MARGIN)
    for members in by_note.values():
        lines = chunks[members[0]].window.lines
        tokens = [embedder.count_tokens(line) + 1 for line in lines]
        passages = _passages(tokens, budget)
        fits = [sum(tokens[first:end]) <= budget for first, end in passages]
        starts = []
        for first, end in passages:
            offsets, at = [], 0
            for line in lines[first:end]:
                offsets.append(at)
                at += len(line) + 1
            starts.append(offsets)
            texts.append("\n".join(lines[first:end]))
        base = len(texts) - len(passages)
        # Each turn is read where it has the most context on both sides.
        home = {}
        for turn in range(len(lines)):
            home[turn] = max((p for p, (first, end) in enumerate(passages) if fits[p] and first <= turn < end),
                             key=lambda p: min(turn - passages[p][0], passages[p][1] - 1 - turn), default=None)
        for n in members:
            window = chunks[n].window
            if any(home[turn] is None for turn, _, _ in window.ranges):
                alone.append(n)
                continue
            ranges = []
            for turn, a, b in window.ranges:
                p = home[turn]
                at = starts[p][turn - passages[p][0]]
                ranges.append((base + p, at + a, at + b))
            spans.append(ranges)
            owners.append(n)
    if owners:
        pooled = embedder.encode_spans(texts, spans)
        for row, n in enumerate(owners):
            if pooled[row].any():
                vectors[n] = pooled[row]
            else:
                alone.append(n)
    return sorted(alone)


def _passages(tokens: list[int], budget: int) -> list[tuple[int, int]]:
    """Runs `(first, end)` of consecutive turns, each within `budget` tokens (`tokens`: each
    turn's), every one but the first starting PASSAGE_OVERLAP turns before its predecessor's
    end. A turn longer than the budget makes a passage of its own (its chunks are embedded
    alone)."""
    passages, first = [], 0
    while first < len(tokens):
        end, used = first, 0
        while end < len(tokens) and used + tokens[end] <= budget:
            used += tokens[end]
            end += 1
        end = max(end, first + 1)
        passages.append((first, end))
        if end >= len(tokens):
            break
        first = max(first + 1, end - PASSAGE_OVERLAP)
    return passages
