#!/usr/bin/env bash
# The wire-compatibility gate: the protos against the released baseline.
set -euo pipefail
export BUF_CACHE_DIR="${TEST_TMPDIR}/buf-cache"
buf="${TEST_SRCDIR}/npm/@bufbuild/buf-linux-x64/bin/buf"
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
# buf wants real directories; runfiles are symlink farms.
cp -rL "${root}/proto" "${TEST_TMPDIR}/current"
cp -rL "${root}/tools/wire_compat/baseline" "${TEST_TMPDIR}/baseline"
cd "${TEST_TMPDIR}/current"
"${buf}" breaking --against "${TEST_TMPDIR}/baseline"
echo "buf breaking against tools/wire_compat/baseline: ok"
