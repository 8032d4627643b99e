"""Answering a question: search (vectors, keywords, filters), which memory is current,
and the context block an agent reads.
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "BRIEF_TYPES": "brief",
    "startup_brief": "brief",
    "CARE": "context",
    "PINNED_MAX": "context",
    "PINNED_TAG": "context",
    "build_context": "context",
    "mark_current": "current",
    "in_project": "projects",
    "project_of": "projects",
    "normalise_day": "filters",
    "embedded_query": "ranking",
    "hop": "relations",
    "related": "related",
    "slot_of": "current",
    "RERANK_CANDIDATES": "rerank",
    "llm_rerank": "rerank",
    "Searcher": "search",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
