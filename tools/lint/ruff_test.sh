#!/usr/bin/env bash
# ruff check + ruff format --check with the root ruff.toml.
# Arguments: the ruff binary, then the directories to check.
set -euo pipefail
ruff="$(readlink -f "$1")"
shift
export RUFF_CACHE_DIR="${TEST_TMPDIR}/ruff-cache"
paths=()
for dir in "$@"; do [[ -d "${dir}" ]] && paths+=("${dir}"); done
"${ruff}" check --config ruff.toml --no-cache "${paths[@]}"
"${ruff}" format --config ruff.toml --check "${paths[@]}"
echo "ruff: ${#paths[@]} directories clean"
