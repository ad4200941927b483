#!/usr/bin/env bash
# Re-resolves a requirements.txt in a scratch virtualenv and writes the
# requirements.lock beside it: the repository root's by default, or DIR's
# (a package with a lock of its own, such as python/adapters/google_adk).
# Run it after changing that requirements.txt, then run tools/bootstrap.sh.
# Usage: tools/lock_requirements.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install -q -r "$dir/requirements.txt"
{
  echo "# Generated from requirements.txt by tools/lock_requirements.sh; do not edit."
  "$scratch/venv/bin/pip" freeze --all | grep -v -E '^pip=='
} > "$dir/requirements.lock"
echo "wrote $dir/requirements.lock"
