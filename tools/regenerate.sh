#!/usr/bin/env bash
# Regenerates every checked-in generated file (Python and TypeScript contracts).
set -euo pipefail
cd "$(dirname "$0")/.."
exec bazel run //tools/codegen:update
