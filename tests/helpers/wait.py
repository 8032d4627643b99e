"""Poll until something a test waits for (a daemon, a file, a commit) comes true."""

from __future__ import annotations

import time


def wait_for(predicate, what: str = "condition", deadline: float = 120.0, interval: float = 0.1):
    """`predicate()`'s first truthy value within `deadline` seconds; AssertionError naming
    `what` (and the last value seen) otherwise."""
    end, last = time.monotonic() + deadline, None
    while time.monotonic() < end:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")
