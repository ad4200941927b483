#!/usr/bin/env bash
# Installs what a fresh machine lacks, from the package registries only:
# Debian packages (Bazel 4, protoc), the .venv from requirements.lock (and
# .venvs/<package> from an adapter's own lock), and
# node_modules from package-lock.json. Idempotent: each part is skipped while
# its stamp matches, so a second run takes a second or two.
set -euo pipefail
cd "$(dirname "$0")/.."

# tmux drives the terminal chat's tests (python/core/tests/test_chat_terminal.py);
# chromium the web console's browser test (python/core/tests/test_console_browser.py).
debs=(bazel-bootstrap bazel-rules-java bazel-rules-proto bazel-skylib protobuf-compiler libprotobuf-dev nodejs npm tmux chromium)
missing=()
for deb in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$deb" 2>/dev/null | grep -q "install ok installed" || missing+=("$deb")
done
# Node and npm may come from elsewhere than Debian (they do on the dev image).
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for deb in "${missing[@]}"; do [[ "$deb" == nodejs || "$deb" == npm ]] || filtered+=("$deb"); done
  missing=("${filtered[@]}")
fi
if ((${#missing[@]})); then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ "$(id -u)" == 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# make_venv DIR LOCK: DIR holds a virtualenv installed from LOCK, stamped with its hash.
make_venv() {
  local venv="$1" lock="$2" stamp
  stamp="$(sha256sum "$lock" | cut -d' ' -f1)"
  if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.lock-stamp" 2>/dev/null)" != "$stamp" ]]; then
    echo "bootstrap: creating $venv from $lock"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    "$venv/bin/pip" install -q -r "$lock"
    echo "$stamp" > "$venv/.lock-stamp"
  fi
}
make_venv .venv requirements.lock
# An adapter whose framework's pins conflict with the shared lock has its own
# requirements.lock and virtualenv, .venvs/<package> (tools/python/local_python.bzl).
for lock in python/adapters/*/requirements.lock; do
  [[ -e "$lock" ]] || continue
  make_venv ".venvs/$(basename "$(dirname "$lock")")" "$lock"
done

npm_stamp="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ ! -d node_modules || "$(cat node_modules/.lock-stamp 2>/dev/null)" != "$npm_stamp" ]]; then
  echo "bootstrap: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$npm_stamp" > node_modules/.lock-stamp
fi
echo "bootstrap: ready"
