"""Stand in for obsidian-git: take `.git/index.lock` the way git does, hold it, let go.

    python hold_index_lock.py REPO/.git/index.lock SECONDS

Prints "held" once the lock is taken, then "released intact" if the lock was still its own
file (same inode, same content) when it let go, "stolen" otherwise.
"""

import os
import sys
import time

CONTENT = b"obsidian-git\n"


def main() -> int:
    path, seconds = sys.argv[1], float(sys.argv[2])
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    os.write(fd, CONTENT)
    os.close(fd)
    inode = os.stat(path).st_ino
    print("held", flush=True)
    time.sleep(seconds)
    try:
        intact = os.stat(path).st_ino == inode and open(path, "rb").read() == CONTENT
    except FileNotFoundError:
        intact = False
    if intact:
        os.unlink(path)
    print("released intact" if intact else "stolen", flush=True)
    return 0 if intact else 1


if __name__ == "__main__":
    sys.exit(main())
