#!/usr/bin/env bash
# Staleness test: every checked-in generated file equals a fresh generation.
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
if ((stale)); then
  echo "${stale} of ${#GENERATED[@]} generated files are stale: run tools/regenerate.sh and commit the result"
  exit 1
fi
echo "${#GENERATED[@]} generated files are up to date"
