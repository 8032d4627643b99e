"""Errors raised by vaultmem's library code; the CLI turns them into one-line messages.

Each class has a stable `code`: the daemon sends it with the message and the client raises
the same class again (`from_wire`), so a message and exit code never depend on which
process did the work. Codes are part of the protocol: never rename one.
"""


class VaultmemError(Exception):
    """Base class: a failure the user can act on (the message says how)."""

    code = "vaultmem_error"

    @classmethod
    def from_wire(cls, message: str) -> "VaultmemError":
        """This error again from its message alone (as the daemon sent it)."""
        return cls(message)


class VaultNotFound(VaultmemError):
    """No vault could be found from --vault, VAULTMEM_VAULT or the current folder."""

    code = "vault_not_found"


class ConfigError(VaultmemError):
    """`.vaultmem/config.toml` is malformed or holds an invalid value."""

    code = "config_error"


class NoteParseError(VaultmemError):
    """A note's frontmatter or encoding could not be read; the file is left untouched."""

    code = "note_parse_error"

    def __init__(self, path, reason):
        self.path = str(path) if path else "<text>"
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    @classmethod
    def from_wire(cls, message: str) -> "NoteParseError":
        path, _, reason = message.partition(": ")
        return cls(path, reason)


class NoteNotFound(VaultmemError):
    """A NOTE argument matched no note by path, title or id."""

    code = "note_not_found"


class NotAMemoryNote(NoteNotFound):
    """A NOTE argument named one of the person's own notes, which vaultmem never changes."""

    code = "not_a_memory_note"


class AmbiguousNote(VaultmemError):
    """A NOTE argument matched several notes."""

    code = "ambiguous_note"


class UnsafeName(VaultmemError):
    """A title or path would escape the vault or break Obsidian links."""

    code = "unsafe_name"


class TranscriptError(VaultmemError):
    """A transcript file could not be imported (names the file and line)."""

    code = "transcript_error"

    def __init__(self, path, line, reason):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {reason}")

    @classmethod
    def from_wire(cls, message: str) -> "TranscriptError":
        where, _, reason = message.partition(": ")
        path, _, line = where.rpartition(":")
        if path and line.isdigit():
            return cls(path, int(line), reason)
        return cls(where, None, reason)


class IndexUnavailable(VaultmemError):
    """The LanceDB index is missing, unreadable or built with another model."""

    code = "index_unavailable"


class ConcurrentEdit(VaultmemError):
    """A note changed on disk between vaultmem reading it and writing it back."""

    code = "concurrent_edit"


class HistoryError(VaultmemError):
    """The vault's git repository is in a state vaultmem cannot safely commit in."""

    code = "history_error"


class ChangeFailed(VaultmemError):
    """A change to the vault failed part-way; every file it had written was put back."""

    code = "change_failed"


class DaemonError(VaultmemError):
    """The daemon could not be started, reached or stopped."""

    code = "daemon_error"


class BadRequest(DaemonError):
    """A request the daemon's protocol does not allow (malformed, or bad arguments)."""

    code = "bad_request"


class NotServed(DaemonError):
    """The daemon cannot answer this exactly as the caller would in-process (the caller
    does the work itself); nothing was done."""

    code = "not_served"


class UnknownOperation(NotServed):
    """The daemon does not serve the requested operation (an older daemon, or a typo)."""

    code = "unknown_op"


class LLMError(VaultmemError):
    """The LLM endpoint failed or returned output that does not validate."""

    code = "llm_error"


def public_errors() -> list[type]:
    """Every error class defined here, base class first."""
    return [cls for cls in globals().values()
            if isinstance(cls, type) and issubclass(cls, VaultmemError)]


def by_code(code: str | None) -> type:
    """The class whose `code` is `code`; `DaemonError` for a code this version does not know."""
    for cls in public_errors():
        if cls.code == code:
            return cls
    return DaemonError
