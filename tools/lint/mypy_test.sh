#!/usr/bin/env bash
# mypy --strict (mypy.ini), once per package. Arguments: the mypy binary, then
# one comma-separated list of directories per package; the first directory of
# each list is that package's import root and goes on every run's MYPYPATH.
set -euo pipefail
mypy="$(readlink -f "$1")"
shift
roots=()
for group in "$@"; do roots+=("${group%%,*}"); done
failures=0
for group in "$@"; do
  IFS=, read -ra dirs <<<"${group}"
  present=() excludes=()
  for dir in "${dirs[@]}"; do
    if [[ "${dir}" == '!'* ]]; then
      excludes+=(--exclude "^${dir#!}")
    elif [[ -d "${dir}" ]]; then
      present+=("${dir}")
    fi
  done
  ((${#present[@]})) || continue
  MYPYPATH="$(IFS=:; echo "${roots[*]}:${present[*]}")"
  export MYPYPATH
  echo "mypy ${present[*]}"
  "${mypy}" --config-file mypy.ini --cache-dir "${TEST_TMPDIR}/mypy-cache" "${excludes[@]}" "${present[@]}" ||
    failures=$((failures + 1))
done
exit "${failures}"
