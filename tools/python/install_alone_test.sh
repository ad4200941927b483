#!/usr/bin/env bash
# Installs each Python package of the repository, alone, into a fresh virtualenv
# from the package registry (plus the repository packages it depends on) and
# imports it: proves every pyproject.toml declares what its code needs.
# Arguments: specs "DIR[+DEP_DIR...]=MODULE", e.g. "python/core+python/contracts=dex_agents".
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
python="$(command -v python3)"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="${TEST_TMPDIR}/pip-cache"
for spec in "$@"; do
  dirs="${spec%%=*}" module="${spec#*=}"
  venv="${TEST_TMPDIR}/venv-${module}"
  "${python}" -m venv "${venv}"
  sources=()
  IFS=+ read -ra parts <<<"${dirs}"
  for dir in "${parts[@]}"; do
    # pip builds from a writable copy: the runfiles tree is read-only symlinks.
    copy="${TEST_TMPDIR}/src/${dir}"
    mkdir -p "${copy}"
    cp -rL "${root}/${dir}/." "${copy}/"
    sources+=("${copy}")
  done
  # --no-compile: byte-compiling every dependency took most of the test's time, and
  # the import below proves what the test is for without it.
  "${venv}/bin/pip" install -q --no-compile "${sources[@]}"
  "${venv}/bin/python" -c "import ${module}; print('${module}', 'imports from', ${module}.__file__)"
done
echo "$# passed, 0 failed"
