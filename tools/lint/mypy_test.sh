#!/usr/bin/env bash
# mypy --strict (mypy.ini) over the given directories; every directory is also
# on MYPYPATH so packages and test helpers import each other as installed.
set -euo pipefail
mypy="$(readlink -f "$1")"
shift
paths=()
for dir in "$@"; do [[ -d "${dir}" ]] && paths+=("${dir}"); done
MYPYPATH="$(IFS=:; echo "${paths[*]}")"
export MYPYPATH
"${mypy}" --config-file mypy.ini --cache-dir "${TEST_TMPDIR}/mypy-cache" "${paths[@]}"
