"""Each package's public names, read lazily: its `__init__` lists what the layers above may
take (`_PUBLIC`: name -> the module that holds it, None for a module itself) and imports a
module only when one of its names is first asked for, so `import vaultmem.store.note` does
not load the rest of `store` (a command's start stays as fast as before the packages).
tests/test_layers.py checks that other packages take only these names.
"""

from __future__ import annotations

from importlib import import_module


def lazy_names(package: str, public: dict[str, str | None]):
    """The module `__getattr__` of `package` for the names of `public`."""

    def __getattr__(name: str):
        if name not in public:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = import_module(f"{package}.{public[name] or name}")
        return module if public[name] is None else getattr(module, name)

    return __getattr__
