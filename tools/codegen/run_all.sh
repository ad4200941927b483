#!/usr/bin/env bash
# Runs each generated-sources updater given as an argument.
set -euo pipefail
for updater in "$@"; do "${updater}"; done
