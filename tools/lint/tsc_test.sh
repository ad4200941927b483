#!/usr/bin/env bash
# tsc --noEmit (strict comes from each tsconfig.json) for every project given.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
for project in "$@"; do
  work="${TEST_TMPDIR}/$(dirname "${project}")"
  mkdir -p "${work}"
  cp -rL "${root}/$(dirname "${project}")/." "${work}/"
  ln -sfn "${TEST_SRCDIR}/npm" "${work}/node_modules"
  node "${TEST_SRCDIR}/npm/typescript/bin/tsc" -p "${work}/tsconfig.json" --noEmit --strict
  echo "tsc --strict: ${project} ok"
done
