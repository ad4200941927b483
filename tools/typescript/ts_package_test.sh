#!/usr/bin/env bash
# Tests one TypeScript workspace package: copies it out of the runfiles tree,
# links the root node_modules, runs `tsc` (strict, from its tsconfig) and then
# `node --test` over the compiled *.test.js files.
# Argument: the package directory relative to the workspace root.
set -euo pipefail
pkg="$1"
root="${TEST_SRCDIR:-$PWD/..}/${TEST_WORKSPACE:-dex_agents}"
work="${TEST_TMPDIR:-$(mktemp -d)}/pkg"
mkdir -p "${work}"
cp -rL "${root}/${pkg}/." "${work}/"
chmod -R u+w "${work}"
ln -sfn "${root}/../npm" "${work}/node_modules"
export DEX_TESTDATA_DIR="${root}/proto/testdata"
cd "${work}"
node node_modules/typescript/bin/tsc -p tsconfig.json
mapfile -t tests < <(find dist -name '*.test.js' | sort)
if ((${#tests[@]} == 0)); then
  echo "no compiled tests under ${pkg}/dist"; exit 1
fi
node --test "${tests[@]}"
