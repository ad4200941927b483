#!/usr/bin/env bash
# Rewrites runners' capabilities.json from their live describe(), then the capability
# table in docs/adapters.md from every runner's file.
#   tools/capabilities.sh                       every runner of tools/capabilities/runners.txt
#   tools/capabilities.sh <capabilities.json>…  those runners only
#   tools/capabilities.sh --table               the table only
# Each runner's file is written by its own test target's capabilities test (on the
# runner's interpreter or Node), run through `bazel run` with DEX_WRITE_CAPABILITIES=1.
set -euo pipefail
cd "$(dirname "$0")/.."
runners=tools/capabilities/runners.txt

declare -A targets=()
order=()
while read -r path target _; do
  [[ -z "${path}" || "${path}" == \#* ]] && continue
  targets["${path}"]="${target}"
  order+=("${path}")
done <"${runners}"

if [[ "${1:-}" == "--table" ]]; then
  selected=()
elif (($# > 0)); then
  selected=("$@")
else
  selected=("${order[@]}")
fi

for path in "${selected[@]}"; do
  target="${targets[${path}]:-}"
  if [[ -z "${target}" ]]; then
    echo "${path} is not a runner of ${runners}" >&2
    exit 2
  fi
  echo "== ${path} (${target})"
  # A new runner's file must exist for Bazel to stage it; its test then fills it.
  [[ -e "${path}" ]] || : >"${path}"
  if [[ "${path}" == python/* ]]; then
    DEX_WRITE_CAPABILITIES=1 bazel run "${target}" -- -k capabilities_json
  else
    # The node test runner's filter; the test's name starts with "capabilities.json".
    DEX_WRITE_CAPABILITIES=1 TS_TEST_NAME_PATTERN="^capabilities\.json" bazel run "${target}"
  fi
done

.venv/bin/python tools/capabilities/capability_table.py --write
echo "docs/adapters.md: capability table written"
