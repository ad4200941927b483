#!/usr/bin/env bash
# The README's test command: bootstrap a fresh machine, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
exec bazel test //... "$@"
