#!/usr/bin/env bash
# tsc --noEmit (strict comes from each tsconfig.json) for every project given.
# A project may name the workspace packages it imports after a colon,
# comma-separated (`typescript/ui/tsconfig.json:typescript/contracts`).
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
for spec in "$@"; do
  project="${spec%%:*}"
  work="${TEST_TMPDIR}/$(dirname "${project}")"
  mkdir -p "${work}"
  cp -rL "${root}/$(dirname "${project}")/." "${work}/"
  if [[ "${spec}" == *:* ]]; then
    deps=()
    IFS=, read -ra names <<< "${spec#*:}"
    for dep in "${names[@]}"; do deps+=("${root}/${dep}"); done
    chmod -R u+w "${work}"
    "${root}/tools/typescript/stage_node_modules.sh" "${TEST_SRCDIR}/npm" "${work}/node_modules" "${deps[@]}"
  else
    ln -sfn "${TEST_SRCDIR}/npm" "${work}/node_modules"
  fi
  node "${TEST_SRCDIR}/npm/typescript/bin/tsc" -p "${work}/tsconfig.json" --noEmit --strict
  echo "tsc --strict: ${project} ok"
done
