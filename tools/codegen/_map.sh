# Sourced by check_generated.sh, copy_generated.sh and drift_test.sh.
# Arguments: OUT_ROOT=SOURCE_DIR mappings, `--`, then the generated files.
# Sets GENERATED[i] / CHECKED_IN[i]: each generated file and its checked-in path
# (the longest matching OUT_ROOT wins), and SOURCE_DIRS: the checked-in
# directories, which hold generated files only.
declare -a ROOTS=() DIRS=() GENERATED=() CHECKED_IN=() SOURCE_DIRS=()
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
mapfile -t SOURCE_DIRS < <(printf '%s\n' "${DIRS[@]}" | sort -u)

# Prints each file under SOURCE_DIRS (below the current directory) that no
# generator writes: a hand-written or left-over file inside a generated directory.
not_generated() {
  local file
  local -A written=()
  for file in "${CHECKED_IN[@]}"; do written["${file}"]=1; done
  for dir in "${SOURCE_DIRS[@]}"; do
    [[ -d "${dir}" ]] || continue
    while IFS= read -r file; do
      [[ -n "${written["${file}"]:-}" ]] || echo "${file}"
    done < <(find -L "${dir}" -type f ! -path '*/__pycache__/*' | sort)
  done
}
