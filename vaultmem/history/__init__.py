"""Git history of the vault: commits of every change (the tool's and the person's), the
change journal, rollback, and erasure that rewrites history.
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "add_warning": "change",
    "commit_journaled": "change",
    "held_paths": "change",
    "vault_change": "change",
    "MIN_PHRASE": "erasure",
    "plan_erasure": "erasure",
    "commit_user_edits": "git",
    "git": None,
    "IndexLock": "lock",
    "lock": None,
    "log": None,
    "Repo": "repo",
    "HistoryRewriter": "rewriter",
    "move_refs": "rewriter",
    "rollback": None,
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
