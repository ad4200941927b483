#!/usr/bin/env bash
# Installs each Python package of the repository, alone, into a fresh virtualenv
# from the package registry (plus the repository packages it depends on) and
# imports it: proves every pyproject.toml declares what its code needs.
# Arguments: specs "DIR[+DEP_DIR...]=MODULE", e.g. "python/core+python/contracts=dex_agents".
#
# Cost, measured: creating a venv with pip in it, and building the same
# repository package once per spec, took most of the time. So one venv carries
# pip and installs into the others (`pip --python`), each repository package is
# built into a wheel once, and the specs install side by side.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
python="$(command -v python3)"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="${TEST_TMPDIR}/pip-cache"
pip_venv="${TEST_TMPDIR}/pip"
"${python}" -m venv "${pip_venv}"
pip="${pip_venv}/bin/pip"

# Every repository package the specs name, once: a writable copy (pip builds in
# the source tree; the runfiles tree is read-only symlinks) built into its wheel.
declare -A wheel_dirs=()
for spec in "$@"; do
  IFS=+ read -ra parts <<<"${spec%%=*}"
  for dir in "${parts[@]}"; do wheel_dirs["${dir}"]="${TEST_TMPDIR}/wheels/${dir}"; done
done
copies=()
for dir in "${!wheel_dirs[@]}"; do
  copy="${TEST_TMPDIR}/src/${dir}"
  mkdir -p "${copy}"
  cp -rL "${root}/${dir}/." "${copy}/"
  copies+=("${copy}")
done
"${pip}" wheel -q --no-deps --wheel-dir "${TEST_TMPDIR}/built" "${copies[@]}"
for dir in "${!wheel_dirs[@]}"; do
  # The wheel's name is the project's: find it by the copy's pyproject name.
  project="$(sed -nE 's/^name = "([^"]+)"/\1/p' "${TEST_TMPDIR}/src/${dir}/pyproject.toml" | head -1)"
  mkdir -p "${wheel_dirs[${dir}]}"
  mv "${TEST_TMPDIR}/built/${project//-/_}"-*.whl "${wheel_dirs[${dir}]}/"
done

# install_spec SPEC LOG: a venv without pip, the spec's wheels installed into it
# from the registry, and its module imported.
install_spec() {
  local spec="$1" module="${1#*=}" venv wheels=()
  IFS=+ read -ra parts <<<"${spec%%=*}"
  venv="${TEST_TMPDIR}/venv-${module}"
  "${python}" -m venv --without-pip "${venv}"
  for dir in "${parts[@]}"; do wheels+=("${wheel_dirs[${dir}]}"/*.whl); done
  # --no-compile: byte-compiling every dependency took most of the install, and
  # the import below proves what the test is for without it.
  "${pip}" --python "${venv}/bin/python" install -q --no-compile "${wheels[@]}"
  "${venv}/bin/python" -c "import ${module}; print('${module}', 'imports from', ${module}.__file__)"
}

pids=()
for spec in "$@"; do
  install_spec "${spec}" >"${TEST_TMPDIR}/${spec#*=}.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  spec="${*:i+1:1}"
  if wait "${pids[i]}"; then
    tail -1 "${TEST_TMPDIR}/${spec#*=}.log"
  else
    failed=$((failed + 1))
    echo "FAILED: ${spec}" >&2
    cat "${TEST_TMPDIR}/${spec#*=}.log" >&2
  fi
done
echo "$(($# - failed)) passed, ${failed} failed"
((failed == 0))
