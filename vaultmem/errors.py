"""Errors raised by vaultmem's library code; the CLI turns them into one-line messages."""


class VaultmemError(Exception):
    """Base class: a failure the user can act on (the message says how)."""


class VaultNotFound(VaultmemError):
    """No vault could be found from --vault, VAULTMEM_VAULT or the current folder."""


class ConfigError(VaultmemError):
    """`.vaultmem/config.toml` is malformed or holds an invalid value."""


class NoteParseError(VaultmemError):
    """A note's frontmatter or encoding could not be read; the file is left untouched."""

    def __init__(self, path, reason):
        self.path = str(path) if path else "<text>"
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class NoteNotFound(VaultmemError):
    """A NOTE argument matched no note by path, title or id."""


class AmbiguousNote(VaultmemError):
    """A NOTE argument matched several notes."""


class UnsafeName(VaultmemError):
    """A title or path would escape the vault or break Obsidian links."""


class TranscriptError(VaultmemError):
    """A transcript file could not be imported (names the file and line)."""

    def __init__(self, path, line, reason):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {reason}")


class IndexUnavailable(VaultmemError):
    """The LanceDB index is missing, unreadable or built with another model."""


class ConcurrentEdit(VaultmemError):
    """A note changed on disk between vaultmem reading it and writing it back."""


class HistoryError(VaultmemError):
    """The vault's git repository is in a state vaultmem cannot safely commit in."""


class DaemonError(VaultmemError):
    """The daemon could not be started, reached or stopped."""


class LLMError(VaultmemError):
    """The LLM endpoint failed or returned output that does not validate."""
