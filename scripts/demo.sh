#!/usr/bin/env bash
# `make demo`: vaultmem's main job on a fresh copy of sample_vault/ (the repo's copy stays clean).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# Outside this repository's work tree, so that `init` gives the vault a git repo of its own.
demo="${VAULTMEM_DEMO_DIR:-${TMPDIR:-/tmp}/vaultmem-demo}/vault"
rm -rf "$demo"
mkdir -p "$(dirname "$demo")"
cp -r "$here/sample_vault" "$demo"
export VAULTMEM_VAULT="$demo"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
say() { printf '\n\033[36m# %s\033[0m\n' "$*"; }

say "Demo vault: $demo (a fresh copy of sample_vault/)"
step vaultmem init "$demo"

say "Write one memory through the write policy, then read it back"
step vaultmem add "The user's favourite editor is Helix" --type preference --tag tools --importance 0.7
step vaultmem list --type preference
step vaultmem show "The user's favourite editor is Helix"

say "Extract a transcript an agent produced (greeting, secret and filler are turned down)"
step vaultmem extract "$demo/Attachments/agent-chat-2026-11-28.jsonl"

say "Index, then search by meaning (no shared words) and by a Chinese keyword"
step vaultmem reindex
step vaultmem search "What is the user trying to give up?" -k 3
step vaultmem search "咖啡" -k 3
step vaultmem context "What should I know before planning the user's December?" --budget 200

say "A contradiction supersedes the old memory; the old one stays in history"
step vaultmem add "The user lives in Porto now" --type fact
step vaultmem search "Where does the user live?" -k 2
step vaultmem search "Where does the user live?" -k 3 --all

say "The daemon watches the vault: edit a note on disk and search finds the edit"
step vaultmem daemon start
note="$demo/Memory/Facts/Has a dog named Biscuit.md"
printf 'Biscuit now has a little sister, a greyhound puppy called Pimenta.\n' >> "$note"
echo "(appended a line to $(basename "$note") with an ordinary file write)"
for _ in $(seq 1 50); do
  if vaultmem search "greyhound puppy" -k 1 --json | grep -q Biscuit; then break; fi
  sleep 0.2
done
step vaultmem search "greyhound puppy" -k 1
step vaultmem daemon status
sleep 6  # the daemon commits a user's edit once the note has been quiet for a few seconds
step vaultmem daemon stop

say "Every version is in git: vaultmem's, the user's edit, and a rollback"
first=$(vaultmem history "Has a dog named Biscuit" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["versions"][-1]["rev"])')
step vaultmem history "Has a dog named Biscuit"
step vaultmem rollback "Has a dog named Biscuit" --to "$first"
step vaultmem history "Has a dog named Biscuit"
step vaultmem log -n 8
