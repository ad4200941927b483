#!/usr/bin/env bash
# Staleness test: every checked-in generated file equals a fresh generation, and
# the generated directories hold nothing else.
set -euo pipefail
source tools/codegen/_map.sh  # runfiles-relative: cwd is the workspace runfiles root
stale=0
for i in "${!GENERATED[@]}"; do
  if [[ ! -f "${CHECKED_IN[$i]}" ]]; then
    echo "MISSING: ${CHECKED_IN[$i]} is not checked in"
    stale=$((stale + 1))
  elif ! diff -u "${CHECKED_IN[$i]}" "${GENERATED[$i]}" >"${TEST_TMPDIR}/diff" 2>&1; then
    echo "STALE: ${CHECKED_IN[$i]} differs from a fresh generation:"
    head -40 "${TEST_TMPDIR}/diff"
    stale=$((stale + 1))
  fi
done
while IFS= read -r extra; do
  echo "NOT GENERATED: ${extra} is in a generated directory, but no generator writes it"
  stale=$((stale + 1))
done < <(not_generated)
if ((stale)); then
  echo "${stale} problems with ${#GENERATED[@]} generated files: run tools/regenerate.sh and commit the result"
  echo "(hand-written code goes beside the generated directory, not in it)"
  exit 1
fi
echo "${#GENERATED[@]} generated files are up to date"
