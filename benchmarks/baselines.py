"""Raw-turn retrieval baselines for the LoCoMo harness: BM25, dense MiniLM and their fusion.

Each function ranks one conversation's turns (the documents, one turn each, text exactly as
imported) for a list of questions and returns, per question, the document indices best first.
They see only turn texts and question texts: never answers, evidence, observations or summaries.

    >>> bm25_rankings(["I love tea", "Dogs bark"], ["who loves tea?"])   # doctest: +SKIP
    [[0, 1]]
"""

from __future__ import annotations

# Reciprocal-rank fusion constant from Cormack et al. (2009); the figures in
# eval/locomo/README.md were measured with it.
RRF_K = 60


def bm25_rankings(docs: list[str], queries: list[str]) -> list[list[int]]:
    """Full BM25 rankings (bm25s defaults, English stopwords, no stemmer) of `docs` per query.

    Chinese has no spaces, and bm25s splits words at spaces: a whole Chinese turn would be
    one token that no question shares (LoCoMo-zh R@10 1.1). Its runs of CJK characters are
    split into overlapping bigrams first, as vaultmem's own full-text index splits them, so
    the baseline is a fair one in Chinese too; English text has none and is unchanged."""
    import bm25s

    from vaultmem.index.table import cjk_bigrams

    docs, queries = [cjk_bigrams(d) for d in docs], [cjk_bigrams(q) for q in queries]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)
    query_tokens = bm25s.tokenize(queries, stopwords="en", return_ids=False, show_progress=False)
    rankings = []
    for tokens in query_tokens:
        # A question made only of stopwords has no BM25 signal: rank nothing rather than noise.
        known = [t for t in tokens if t in retriever.vocab_dict]
        if not known:
            rankings.append([])
            continue
        ids, scores = retriever.retrieve([known], k=len(docs), show_progress=False)
        rankings.append([int(i) for i, s in zip(ids[0], scores[0]) if s > 0])
    return rankings


def dense_rankings(embedder, docs: list[str], queries: list[str]) -> list[list[int]]:
    """Full cosine rankings of `docs` per query with `embedder` (a `vaultmem.index.embed.Embedder`)."""
    import numpy as np

    doc_vectors = embedder.encode(docs)
    query_vectors = embedder.encode(queries)
    similarity = query_vectors @ doc_vectors.T
    return [list(map(int, np.argsort(-row, kind="stable"))) for row in similarity]


def rrf_rankings(*rankings_per_retriever: list[list[int]], k: int = RRF_K) -> list[list[int]]:
    """Reciprocal-rank fusion: per query, sum 1/(k + rank) over the retrievers' rankings."""
    fused = []
    for per_query in zip(*rankings_per_retriever):
        scores: dict[int, float] = {}
        for ranking in per_query:
            for rank, doc in enumerate(ranking, start=1):
                scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
        fused.append(sorted(scores, key=lambda doc: (-scores[doc], doc)))
    return fused


def all_baselines(embedder, docs: list[str], queries: list[str]) -> dict[str, list[list[int]]]:
    """The three baselines the harness reports, keyed by the names it prints."""
    bm25 = bm25_rankings(docs, queries)
    dense = dense_rankings(embedder, docs, queries)
    return {"bm25": bm25, "dense": dense, "hybrid": rrf_rankings(bm25, dense)}
