#!/usr/bin/env bash
# buf lint with proto/buf.yaml, and buf format: both offline.
set -euo pipefail
export BUF_CACHE_DIR="${TEST_TMPDIR}/buf-cache"
buf="${TEST_SRCDIR}/npm/@bufbuild/buf-linux-x64/bin/buf"
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}/proto"
"${buf}" lint
"${buf}" format --diff --exit-code
echo "buf lint and format: ok"
