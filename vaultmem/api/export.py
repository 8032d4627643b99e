"""Memory for other agents: the hot set written as their start-up files (`export`)."""

from __future__ import annotations


class Export:
    """`Memory`'s hot set for CLAUDE.md, AGENTS.md or Hermes' files."""

    def export(self, format: str, out=None, user: str | None = None) -> dict:
        """Write the hot set (most important current memories) for another agent:
        `format` is `claude` (a section of CLAUDE.md), `agents` (AGENTS.md) or `hermes`
        (MEMORY.md and USER.md in a folder). Returns `{"format", "files", "memories", "ids",
        "chars", "flagged", "left_out"}`; `flagged` lists memories left out because they
        read like prompt injections.

        >>> Memory(vault).export("claude", out=tmp / "CLAUDE.md")["files"]  # doctest: +SKIP
        ['/tmp/.../CLAUDE.md']
        """
        from vaultmem.memory.export import export

        return export(self.vault, format, out=out, user=user or self.user)
