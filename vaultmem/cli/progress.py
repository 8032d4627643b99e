"""Progress on stderr for long commands: one line rewritten in place (`\r`) on a terminal,
an occasional plain line (at most one per `every` seconds) when stderr is a file or a pipe.

    >>> line = ProgressLine()                                    # doctest: +SKIP
    >>> line.show("extract: session 12/340 · 1,204 turns")       # doctest: +SKIP
    >>> line.close()                                             # doctest: +SKIP
"""

from __future__ import annotations

import sys
import time


class ProgressLine:
    """Shows the latest status; `enabled=False` (e.g. `--json`) shows nothing."""

    def __init__(self, stream=None, enabled: bool = True, every: float = 2.0, clock=time.monotonic):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = 0.1 if self.tty else every
        self.clock = clock
        self.started = clock()
        self._last = None
        self._width = 0
        self._pending = None

    def show(self, text: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if not force and self._last is not None and now - self._last < self.every:
            self._pending = text
            return
        self._last, self._pending = now, None
        if self.tty:
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line (a terminal's is cleared, so the command's own output starts clean)."""
        if self.enabled and self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
        self._width = 0

    def elapsed(self) -> float:
        return self.clock() - self.started


def rate_and_left(done: float, total: float, seconds: float, unit: str) -> str:
    """`18 turns/s · ~3 min left` once something is done, else ``.

    >>> rate_and_left(180, 1260, 10.0, "turns")
    '18 turns/s · ~1 min left'
    """
    if done <= 0 or seconds <= 0:
        return ""
    rate = done / seconds
    return f"{rate:,.0f} {unit}/s · ~{duration(max(total - done, 0) / rate)} left"


def duration(seconds: float) -> str:
    """`40 s`, `3 min`, `2 h 5 min`."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
