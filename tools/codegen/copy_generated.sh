#!/usr/bin/env bash
# bazel run target: copies generated files over their checked-in copies and
# deletes files in the generated directories that no generator writes any more.
set -euo pipefail
: "${BUILD_WORKSPACE_DIRECTORY:?run this with bazel run}"
source tools/codegen/_map.sh  # runfiles-relative: cwd is the workspace runfiles root
for i in "${!GENERATED[@]}"; do
  dest="${BUILD_WORKSPACE_DIRECTORY}/${CHECKED_IN[$i]}"
  mkdir -p "$(dirname "${dest}")"
  if ! cmp -s "${GENERATED[$i]}" "${dest}"; then
    install -m 0644 "${GENERATED[$i]}" "${dest}"
    echo "updated ${CHECKED_IN[$i]}"
  fi
done
cd "${BUILD_WORKSPACE_DIRECTORY}"
while IFS= read -r extra; do
  rm -- "${extra}"
  echo "removed ${extra}"
done < <(not_generated)
echo "${#GENERATED[@]} generated files in place"
