"""Rewriting git history in place: the one history rewriter vaultmem has (`forget --purge`).

`HistoryRewriter` walks every commit of every ref oldest first and writes a new commit
wherever something changed: a blob it must drop (every version of a purged note), a blob it
must edit (a session note whose turns are redacted), a parent that was rewritten, or a
message that names what is erased. Messages also cite rewritten commits by their new
hashes ("roll back 'X' to 1a2b3c4d" keeps pointing at the right version). Everything else is
kept byte for byte: authors, dates, trees of other folders; signatures are dropped since
they no longer match. Trees are rebuilt only along the paths that change, memoised per
(tree, folder), so a rewrite costs about one tree read per changed folder per commit.

`move_refs` then points every branch, tag and remote-tracking ref at the new commits.
"""

from __future__ import annotations

import re
import subprocess
from io import BytesIO
from typing import Callable

from vaultmem.errors import HistoryError

_TREE_MODE = b"40000"
_SIGNATURE_HEADERS = (b"gpgsig", b"gpgsig-sha256")
# A commit hash as people and vaultmem cite it: 7 to 40 hex digits standing alone.
_HASH = re.compile(rb"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])")

Scrub = Callable[[bytes], bytes]


class HistoryRewriter:
    """Rewrites every ref's history.

    `drop`: (repo path, blob sha) pairs removed from every tree. `edits`: repo path ->
    function turning any blob's bytes at that path into its new bytes (returning them
    unchanged keeps the blob). `scrub`: applied to every commit message (and tag message).
    After `rewrite_all()`, `blobs` maps each (path, blob) it edited to the replacement and
    `messages` counts the commit messages that changed.
    """

    def __init__(self, repo, drop: set[tuple[str, str]], edits: dict[str, Callable[[bytes], bytes]],
                 scrub: Scrub):
        self.repo, self.odb = repo, repo.repo.odb
        self.drop = drop
        self.edits = edits
        self.scrub = scrub
        paths = {name for name, _ in drop} | set(edits)
        self.dirs = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
        self.trees: dict[tuple[str, str], str | None] = {}
        self.blobs: dict[tuple[str, str], str] = {}
        self.messages = 0
        self._by_prefix: dict[bytes, list[str]] = {}
        self._mapping: dict[str, str] = {}

    def rewrite_all(self) -> dict[str, str]:
        """Old commit sha -> new commit sha, for every commit reachable from a ref."""
        order = self.repo.run("rev-list", "--all", "--topo-order", "--reverse").split()
        for sha in order:
            new = self._commit(sha)
            self._mapping[sha] = new
            if new != sha:
                self._by_prefix.setdefault(sha[:7].encode(), []).append(sha)
        return dict(self._mapping)

    # --- objects ---------------------------------------------------------------------------
    def _read(self, sha: str) -> bytes:
        return self.odb.stream(bytes.fromhex(sha)).read()

    def edit_blob(self, path: str, sha: str) -> str:
        """The blob that replaces blob `sha` at `path` (itself when unchanged)."""
        key = (path, sha)
        if key not in self.blobs:
            data = self._read(sha)
            new = self.edits[path](data)
            self.blobs[key] = sha if new == data else store(self.odb, b"blob", new)
        return self.blobs[key]

    def edited_blobs(self) -> int:
        """How many (path, blob) versions an edit replaced."""
        return sum(1 for (_, old), new in self.blobs.items() if old != new)

    def _tree(self, sha: str, folder: str) -> str | None:
        key = (sha, folder)
        if key not in self.trees:
            self.trees[key] = self._rewrite_tree(sha, folder)
        return self.trees[key]

    def _rewrite_tree(self, sha: str, folder: str) -> str | None:
        data, pos, out, changed = self._read(sha), 0, [], False
        width = len(sha) // 2
        while pos < len(data):
            space = data.index(b" ", pos)
            nul = data.index(b"\0", space)
            mode, name = data[pos:space], data[space + 1:nul].decode("utf-8", "surrogateescape")
            entry_sha = data[nul + 1:nul + 1 + width]
            pos = nul + 1 + width
            path = f"{folder}/{name}" if folder else name
            if mode != _TREE_MODE:
                if (path, entry_sha.hex()) in self.drop:
                    changed = True
                    continue
                if path in self.edits:
                    new = self.edit_blob(path, entry_sha.hex())
                    if new != entry_sha.hex():
                        changed, entry_sha = True, bytes.fromhex(new)
            elif path in self.dirs:
                new = self._tree(entry_sha.hex(), path)
                if new is None:
                    changed = True
                    continue
                if new != entry_sha.hex():
                    changed, entry_sha = True, bytes.fromhex(new)
            out.append(mode + b" " + name.encode("utf-8", "surrogateescape") + b"\0" + entry_sha)
        if not changed:
            return sha
        return store(self.odb, b"tree", b"".join(out)) if out else None

    def _commit(self, sha: str) -> str:
        raw = self._read(sha)
        head, _, message = raw.partition(b"\n\n")
        lines = head.split(b"\n")
        tree = lines[0].split(b" ", 1)[1].decode()
        parents = [line.split(b" ", 1)[1].decode() for line in lines if line.startswith(b"parent ")]
        new_tree = self._tree(tree, "") or store(self.odb, b"tree", b"")
        new_parents = [self._mapping.get(p, p) for p in parents]
        new_message = self.message(message)
        if new_tree == tree and new_parents == parents and new_message == message:
            return sha
        self.messages += new_message != message
        headers = [b"tree " + new_tree.encode()] + [b"parent " + p.encode() for p in new_parents]
        skipping = False
        for line in lines[1:]:
            if line.startswith(b"parent "):
                continue
            if line.startswith(b" ") and skipping:
                continue
            skipping = line.split(b" ", 1)[0] in _SIGNATURE_HEADERS
            if not skipping:
                headers.append(line)
        return store(self.odb, b"commit", b"\n".join(headers) + b"\n\n" + new_message)

    # --- messages --------------------------------------------------------------------------
    def message(self, text: bytes) -> bytes:
        """`text` scrubbed, citing each already rewritten commit by its new hash (same length)."""
        return _HASH.sub(self._new_hash, self.scrub(text))

    def _new_hash(self, match) -> bytes:
        cited = match.group(0)
        found = [old for old in self._by_prefix.get(cited[:7], ()) if old.encode().startswith(cited)]
        if len(found) != 1:
            return cited
        return self._mapping[found[0]][:len(cited)].encode()


def move_refs(repo, mapping: dict[str, str], scrub: Scrub) -> list[str]:
    """Point every branch, tag and remote-tracking ref (and ORIG_HEAD) at the rewritten
    commits, in one transaction. Annotated tags get a new tag object (unsigned, message
    scrubbed). Returns the refs moved."""
    moved, commands = [], []
    listing = repo.run("for-each-ref", "--format=%(objectname) %(objecttype) %(refname)")
    refs = [line.split(" ", 2) for line in listing.splitlines() if line]
    orig = repo.git_dir / "ORIG_HEAD"
    if orig.is_file():
        refs.append([orig.read_text().strip(), "commit", "ORIG_HEAD"])
    for old, kind, ref in refs:
        new = None
        if kind == "commit" and mapping.get(old, old) != old:
            new = mapping[old]
        elif kind == "tag":
            raw = repo.run("cat-file", "tag", old, raw=True)
            target = raw.split(b"\n", 1)[0].split(b" ", 1)[1].decode()
            if mapping.get(target, target) != target:
                new = _retag(repo, raw, target, mapping[target], scrub)
        if new:
            commands.append(f"update {ref} {new} {old}\n")
            moved.append(ref)
    if commands:
        done = subprocess.run(["git", "update-ref", "--no-deref", "--stdin"], cwd=repo.top, capture_output=True,
                              input="".join(commands).encode())
        if done.returncode != 0:
            raise HistoryError(f"git update-ref failed: {done.stderr.decode(errors='replace').strip()}")
    return moved


def _retag(repo, raw: bytes, old_target: str, new_target: str, scrub: Scrub) -> str:
    head, _, message = raw.replace(old_target.encode(), new_target.encode(), 1).partition(b"\n\n")
    signature = message.find(b"-----BEGIN PGP SIGNATURE-----")
    message = message if signature == -1 else message[:signature]
    return store(repo.repo.odb, b"tag", head + b"\n\n" + scrub(message))


def store(odb, kind: bytes, data: bytes) -> str:
    """Write one object into the repository; returns its sha."""
    from gitdb import IStream

    return odb.store(IStream(kind, len(data), BytesIO(data))).binsha.hex()
