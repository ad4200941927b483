#!/usr/bin/env bash
# The kill-and-load soak (python/testing/src/dex_agents_testing/soak): bootstrap a
# fresh machine, then run sessions while Workers and dexlite are SIGKILLed, and
# check every invariant. `tools/soak.sh --long` for 100 sessions x 10 turns,
# `--long --minutes N` to run until every Step type has 20 kills (at most N minutes;
# each slot then runs one session of T turns after another);
# `--help` lists the knobs. Exits 1 on an invariant violation.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
exec bazel run //python/testing:soak -- "$@"
