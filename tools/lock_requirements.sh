#!/usr/bin/env bash
# Re-resolves requirements.txt in a scratch virtualenv and writes requirements.lock.
# Run it after changing requirements.txt, then run tools/bootstrap.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
python3 -m venv "$scratch/venv"
"$scratch/venv/bin/pip" install -q -r requirements.txt
{
  echo "# Generated from requirements.txt by tools/lock_requirements.sh; do not edit."
  "$scratch/venv/bin/pip" freeze --all | grep -v -E '^pip=='
} > requirements.lock
echo "wrote requirements.lock"
