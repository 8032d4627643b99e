"""Transcripts in, memory notes out: importers for each agent's and app's format,
session notes, the offline and LLM extractors and the run that writes their notes.
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "first_user_texts": "importers",
    "model_clis": "llm_command",
    "LLMSettings": "llm_endpoint",
    "STATUS_FILE": "llm_endpoint",
    "chat": "llm_endpoint",
    "model_report": "llm_endpoint",
    "extract": "run",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
