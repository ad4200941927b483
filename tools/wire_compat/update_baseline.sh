#!/usr/bin/env bash
# Makes the current protos the released baseline. Run it only when releasing
# contracts, in a commit of its own, after review: from then on `buf breaking`
# holds every later change to what this copies.
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf tools/wire_compat/baseline
mkdir -p tools/wire_compat/baseline
cp proto/buf.yaml tools/wire_compat/baseline/
cp -r proto/dex tools/wire_compat/baseline/
echo "baseline updated from proto/; commit tools/wire_compat/baseline on its own"
