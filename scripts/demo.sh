#!/usr/bin/env bash
# `make demo`: vaultmem's main job on a fresh copy of sample_vault/ (the repo's copy stays clean).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
demo="$here/build/demo-vault"
rm -rf "$demo"
mkdir -p "$here/build"
cp -r "$here/sample_vault" "$demo"
export VAULTMEM_VAULT="$demo"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

echo "Demo vault: $demo (a copy of sample_vault/)"
step vaultmem init "$demo"
step vaultmem add "The user's favourite editor is Helix" --type preference --tag tools --importance 0.7
step vaultmem list
step vaultmem show "The user's favourite editor is Helix"
