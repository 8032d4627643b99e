"""Memory notes as a collection: reading and writing them through the policy, their
lifecycle (correct, gc, purge), forgetting, and the export of a hot set to agents.
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "export": "export",
    "export_if_configured": "export",
    "forget": None,
    "audit_log": "lifecycle",
    "correct": "lifecycle",
    "gc": "lifecycle",
    "purge": "lifecycle",
    "check_run_owner": "memories",
    "memories": None,
    "not_found": "memories",
    "plain_meta": "memories",
    "resolve_note": "memories",
    "summary": "memories",
    "update_note": "memories",
    "review": "review",
    "since_day": "review",
    "Merges": "write",
    "UNDATED": "write",
    "apply": "write",
    "load_pool": "write",
    "plan": "write",
    "supersede": "write",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
