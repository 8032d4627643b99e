"""vaultmem: long-term memory for AI agents, kept as Markdown in an Obsidian vault."""

__version__ = "0.1.0"


def __getattr__(name):
    # `from vaultmem import Memory` without importing the API (and its dependencies)
    # when only the CLI's --help is wanted.
    if name == "Memory":
        from vaultmem.api import Memory

        return Memory
    raise AttributeError(name)
