"""What may become a memory: the write policy (screen, dedupe, supersede), the candidate
it judges, and the secret rules and redaction that keep secrets out.
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "Candidate": "candidate",
    "make_title": "candidate",
    "Decision": "decide",
    "decide": "decide",
    "Existing": "pool",
    "Pool": "pool",
    "normalise": "pool",
    "redact": "redact",
    "screen": "screen",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
