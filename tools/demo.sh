#!/usr/bin/env bash
# The README's demo command: bootstrap a fresh machine, then run an agent
# session on dexlite with a scripted model (python/examples/demo.py).
# `tools/demo.sh --chat [chat options]` is the interactive version: `dex-agents chat
# --dexlite` on the scripted demo agent (dex_agents.chat.demo_agent);
# `tools/demo.sh --console [serve options]` serves the web console on the same agent
# (`dex-agents serve --dexlite --console`, http://127.0.0.1:8000/console/).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/bootstrap.sh
if [[ "${1:-}" == "--chat" ]]; then
  shift
  exec bazel run //python/core:dex_agents_chat -- chat --dexlite "$@"
fi
if [[ "${1:-}" == "--console" ]]; then
  shift
  exec bazel run //python/core:dex_agents_serve -- serve --dexlite \
    --flow dex_agents.chat.demo_agent:flow --console "$@"
fi
exec bazel run //python/examples:demo -- "$@"
