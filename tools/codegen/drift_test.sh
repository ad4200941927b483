#!/usr/bin/env bash
# Proves the staleness test can fail: in a scratch copy of the checked-in and
# freshly generated files, a hand edit to any generated file, a deleted one and
# a hand-written file inside a generated directory must each be reported.
# Arguments: those of check_generated.sh.
set -euo pipefail
ARGS=("$@")
source tools/codegen/_map.sh  # consumes "$@"
tree="${TEST_TMPDIR}/tree"
mkdir -p "${tree}"
cp -L --parents tools/codegen/_map.sh tools/codegen/check_generated.sh "${tree}"
cp -L --parents "${GENERATED[@]}" "${CHECKED_IN[@]}" "${tree}"
runfiles="${PWD}"
cd "${tree}"

check() { bash tools/codegen/check_generated.sh "$@" >"${TEST_TMPDIR}/out" 2>&1; }
failures=0
expect_failure() {  # expect_failure TEXT DESCRIPTION: the check fails and prints TEXT
  if check "${ARGS[@]}"; then
    echo "FAIL: the staleness test passed after $2"
    failures=$((failures + 1))
  elif ! grep -qF -- "$1" "${TEST_TMPDIR}/out"; then
    echo "FAIL: after $2 the staleness test did not report '$1':"
    cat "${TEST_TMPDIR}/out"
    failures=$((failures + 1))
  fi
}

if ! check "${ARGS[@]}"; then
  cat "${TEST_TMPDIR}/out"
  echo "the scratch copy is stale before any edit: run tools/regenerate.sh"
  exit 1
fi
for file in "${CHECKED_IN[@]}"; do
  cp "${file}" "${TEST_TMPDIR}/saved"
  echo "hand edit" >>"${file}"
  expect_failure "STALE: ${file}" "a hand edit to ${file}"
  cp "${TEST_TMPDIR}/saved" "${file}"
done
rm "${CHECKED_IN[0]}"
expect_failure "MISSING: ${CHECKED_IN[0]}" "deleting ${CHECKED_IN[0]}"
cp -L "${runfiles}/${CHECKED_IN[0]}" "${CHECKED_IN[0]}"
for dir in "${SOURCE_DIRS[@]}"; do
  extra="${dir}/hand_written.txt"
  echo "hand-written" >"${extra}"
  expect_failure "NOT GENERATED: ${extra}" "adding ${extra}"
  rm "${extra}"
done
if ((failures)); then
  exit 1
fi
check "${ARGS[@]}" || { cat "${TEST_TMPDIR}/out"; echo "the scratch copy did not recover"; exit 1; }
echo "the staleness test caught an edit to each of ${#CHECKED_IN[@]} files, a deletion and a stray file"
