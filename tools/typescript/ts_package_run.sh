#!/usr/bin/env bash
# `bazel run` helper: builds one TypeScript workspace package in a scratch
# directory and runs one of its compiled scripts.
# Arguments: the package directory, then the script relative to the package.
set -euo pipefail
pkg="$1" script="$2"
shift 2
runfiles="${RUNFILES_DIR:-$0.runfiles}"
root="${runfiles}/dex_agents"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
cp -rL "${root}/${pkg}/." "${work}/"
chmod -R u+w "${work}"
ln -sfn "${runfiles}/npm" "${work}/node_modules"
cd "${work}"
node node_modules/typescript/bin/tsc -p tsconfig.json
node "${script}" "$@"
