#!/usr/bin/env bash
# Applies one breaking edit at a time to a scratch copy of the protos and
# checks that `buf breaking` against the baseline reports it.
set -euo pipefail
export BUF_CACHE_DIR="${TEST_TMPDIR}/buf-cache"
buf="${TEST_SRCDIR}/npm/@bufbuild/buf-linux-x64/bin/buf"
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
baseline="${TEST_TMPDIR}/baseline"
cp -rL "${root}/tools/wire_compat/baseline" "${baseline}"

failures=0
expect_reported() { # name, file, sed expression, expected text in buf's report
  local name="$1" file="$2" edit="$3" want="$4" scratch="${TEST_TMPDIR}/$1"
  cp -rL "${root}/proto" "${scratch}"
  sed -i -e "${edit}" "${scratch}/${file}"
  if cmp -s "${root}/proto/${file}" "${scratch}/${file}"; then
    echo "FAIL ${name}: the edit changed nothing (update this test)"; failures=$((failures + 1)); return
  fi
  local out rc=0
  out="$(cd "${scratch}" && "${buf}" breaking --against "${baseline}" 2>&1)" || rc=$?
  if [[ ${rc} -ne 0 && "${out}" == *"${want}"* ]]; then
    echo "ok   ${name}: ${out%%$'\n'*}"
  else
    echo "FAIL ${name}: rc=${rc}, want a report containing '${want}', got:"; echo "${out}"
    failures=$((failures + 1))
  fi
}

expect_reported rename_field dex/agents/v1/tool.proto \
  's/string tool_call_id = 1;/string call_id = 1;/' 'changed name from "tool_call_id" to "call_id"'
expect_reported renumber_field dex/agents/v1/session.proto \
  's/int32 turn_count = 2;/int32 turn_count = 12;/' 'field "2" with name "turn_count" on message "AgentState" was deleted'
expect_reported drop_enum_value dex/agents/v1/enums.proto \
  '/TOOL_CALL_STATUS_OUTCOME_UNKNOWN = 9;/d' 'enum value "9" on enum "ToolCallStatus" was deleted'
expect_reported change_type dex/agents/v1/message.proto \
  's/optional string text = 4;/optional int32 text = 4;/' 'changed type from "string" to "int32"'
# The runner service (runner.proto): a removed RPC, a call that stops
# streaming, and a renamed frame field each break the sidecar's peer.
expect_reported drop_runner_rpc dex/agents/v1/runner.proto \
  '/rpc PollToolTask(PollToolTaskRequest)/d' 'RPC "PollToolTask" on service "AgentFrameworkRunnerService" was deleted'
expect_reported unstream_runner_rpc dex/agents/v1/runner.proto \
  's/returns (stream RunModelStepResponse)/returns (RunModelStepResponse)/' 'changed from server streaming to server unary'
expect_reported rename_runner_frame_field dex/agents/v1/runner.proto \
  's/optional RunnerTurnCompleted turn_completed = 3;/optional RunnerTurnCompleted completed = 3;/' 'changed name from "turn_completed" to "completed"'

if ((failures)); then
  echo "${failures} breaking edit(s) not reported"; exit 1
fi
echo "7 passed, 0 failed"
