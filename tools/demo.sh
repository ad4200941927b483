#!/usr/bin/env bash
# The README's demo command: bootstrap a fresh machine, then run an agent
# session on dexlite with a scripted model (python/examples/demo.py).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
exec bazel run //python/examples:demo -- "$@"
