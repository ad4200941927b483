#!/usr/bin/env bash
# Bazel's build of the console's static files (//typescript/console:static):
# copies the package to a scratch directory, stages node_modules with built
# copies of @dex-agents/contracts and @dex-agents/ui, type-checks with tsc
# (strict, from tsconfig.json) and bundles with esbuild into OUT_DIR.
# Arguments: <npm dir> <OUT_DIR>, run from the execution root.
set -euo pipefail
npm="$(cd "$1" && pwd)"; out="$(mkdir -p "$2" && cd "$2" && pwd)"
root="${PWD}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
cp -rL "${root}/typescript/console/." "${work}/"
chmod -R u+w "${work}"
"${root}/tools/typescript/stage_node_modules.sh" "${npm}" "${work}/node_modules" \
  "${root}/typescript/contracts" "${root}/typescript/ui"
cd "${work}"
node node_modules/typescript/bin/tsc -p tsconfig.json
node dist/build/bundle.js "${out}"
