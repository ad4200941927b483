# Sourced by check_generated.sh and copy_generated.sh.
# Arguments: OUT_ROOT=SOURCE_DIR mappings, `--`, then the generated files.
# Sets GENERATED[i] / CHECKED_IN[i]: each generated file and its checked-in path
# (the longest matching OUT_ROOT wins).
declare -a ROOTS=() DIRS=() GENERATED=() CHECKED_IN=()
while (($#)) && [[ "$1" != "--" ]]; do
  ROOTS+=("${1%%=*}") DIRS+=("${1#*=}")
  shift
done
shift
for file in "$@"; do
  best=-1
  for i in "${!ROOTS[@]}"; do
    if [[ "${file}" == "${ROOTS[$i]}/"* ]] && ((best < 0 || ${#ROOTS[$i]} > ${#ROOTS[$best]})); then
      best=$i
    fi
  done
  if ((best < 0)); then
    echo "no mapping for generated file ${file}" >&2
    exit 2
  fi
  GENERATED+=("${file}")
  CHECKED_IN+=("${DIRS[$best]}/${file#"${ROOTS[$best]}/"}")
done
