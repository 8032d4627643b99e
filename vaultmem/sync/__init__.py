"""A vault on several devices: the merge driver, reconciling merged duplicates, the
driver's registration and git's ignores (what a clone lacks).
"""

from vaultmem.public import lazy_names

_PUBLIC = {
    "CONFLICT_MARK": "merge",
    "run_driver": "merge",
    "reconcile": None,
    "ensure_ignores": "remote",
    "register_driver": "remote",
    "remote": None,
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_names(__name__, _PUBLIC)
