#!/usr/bin/env bash
# mypy --strict (mypy.ini), once per package. Arguments: the mypy binary, then
# one comma-separated list of directories per package; the first directory of
# each list is that package's import root and goes on every run's MYPYPATH.
# A list may name single files too (their directories join that run's MYPYPATH);
# an argument `+DIR` only puts DIR on MYPYPATH
# (a package imported by the checked ones, checked by another target).
set -euo pipefail
mypy="$(readlink -f "$1")"
shift
roots=()
groups=()
for group in "$@"; do
  roots+=("${group#+}")
  [[ "${group}" == +* ]] || groups+=("${group}")
done
roots=("${roots[@]%%,*}")
failures=0
for group in "${groups[@]}"; do
  IFS=, read -ra dirs <<<"${group}"
  present=() excludes=() bases=()
  for dir in "${dirs[@]}"; do
    if [[ "${dir}" == '!'* ]]; then
      excludes+=(--exclude "^${dir#!}")
    elif [[ -d "${dir}" ]]; then
      present+=("${dir}") bases+=("${dir}")
    elif [[ -f "${dir}" ]]; then
      present+=("${dir}") bases+=("$(dirname "${dir}")")
    fi
  done
  ((${#present[@]})) || continue
  MYPYPATH="$(IFS=:; echo "${roots[*]}:${bases[*]}")"
  export MYPYPATH
  echo "mypy ${present[*]}"
  "${mypy}" --config-file mypy.ini --cache-dir "${TEST_TMPDIR}/mypy-cache" "${excludes[@]}" "${present[@]}" ||
    failures=$((failures + 1))
done
exit "${failures}"
