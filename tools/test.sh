#!/usr/bin/env bash
# The README's test command: bootstrap a fresh machine, then run every test.
# Ends with the suite's wall time and its ten slowest targets, so a target that
# grows slow is seen at the landing that made it slow (CI's budget is 25 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
log="$(mktemp)"
trap 'rm -f "${log}"' EXIT
started=${SECONDS}
set +e
bazel test //... "$@" 2>&1 | tee "${log}"
status=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - started))
echo
echo "suite: $((elapsed / 60)) min $((elapsed % 60)) s; slowest targets:"
# Bazel's summary lines: "//pkg:target   PASSED in 12.3s" (or "(cached) PASSED", "FAILED in").
grep -E '^//\S+ +(\(cached\) )?[A-Z ]+ in [0-9.]+s' "${log}" \
  | sed -E 's/^(\S+) +(\(cached\) )?([A-Z ]+) in ([0-9.]+)s.*/\4 \1 \2\3/' \
  | sort -rn | head -10 \
  | awk '{ printf "  %7.1f s  %s", $1, $2; for (i = 3; i <= NF; i++) printf " %s", $i; print "" }'
exit "${status}"
