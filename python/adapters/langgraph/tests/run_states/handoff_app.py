"""The run-state recorder's LangGraph handoff: a triage node hands the turn to a billing agent.

The graph is LangGraph's multi-agent handoff: the `triage` node returns
`Command(goto="billing")` for a refund request (else `Command(goto="helper")`),
and each agent is a `create_agent` subgraph with `DexStepMiddleware`, so the
billing agent's `refund` call is a tool Step and the turn resumes inside the
agent it was handed to. Served like the integration apps
(`python handoff_app.py --server ADDR --flow-type T --log PATH`); the model
decides from the messages alone and logs every call to PATH.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from dex_agents import AgentSessionFlow, ToolPolicy, run_worker
from dex_agents_contracts import ToolEffect
from dex_agents_langgraph import DexCheckpointSaver, DexStepMiddleware, LangGraphRunner
from dex_agents_langgraph.testing import RespondingChatModel, trailing_tool_messages
from dex_agents_testing.run_state_fixtures import ModelScript
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command

Reply = Callable[[list[BaseMessage]], AIMessage]


def _prompt(messages: Sequence[BaseMessage]) -> str:
    prompts = [str(m.text) for m in messages if isinstance(m, HumanMessage)]
    return prompts[-1] if prompts else ""


def scripted_reply(log_path: str) -> Reply:
    """A refund prompt's order is refunded, then the result is the answer."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        prompt = _prompt(messages)
        results = trailing_tool_messages(messages)
        with Path(log_path).open("a") as f:
            f.write(json.dumps({"kind": "model", "prompt": prompt, "results": len(results)}) + "\n")
        if results:
            return AIMessage(content="Billing: " + "; ".join(str(r.text) for r in results))
        if prompt.startswith("refund "):
            order = prompt.removeprefix("refund ")
            call = {"id": "r1", "name": "refund", "args": {"order": order}}
            return AIMessage(content="", tool_calls=[call])
        return AIMessage(content=f"I have seen {len(messages)} messages.")

    return reply


def _runner(reply: Reply) -> LangGraphRunner:
    @tool
    def refund(order: str) -> str:
        """Refunds an order."""
        return f"refunded {order}"

    model = RespondingChatModel(respond=reply)
    billing = create_agent(model, [refund], middleware=[DexStepMiddleware()])
    helper = create_agent(model, [], middleware=[DexStepMiddleware()])

    def triage(state: MessagesState) -> Command[Literal["billing", "helper"]]:
        """The handoff: a refund goes to billing, anything else to the helper."""
        refund_asked = _prompt(state["messages"]).startswith("refund ")
        return Command(goto="billing" if refund_asked else "helper")

    builder = StateGraph(MessagesState)
    builder.add_node("triage", triage)
    builder.add_node("billing", billing)
    builder.add_node("helper", helper)
    builder.add_edge(START, "triage")
    graph = builder.compile(checkpointer=DexCheckpointSaver())
    policy = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    return LangGraphRunner(graph, tools=[refund], tool_policies={"refund": policy})


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    del interrupt_deadline_seconds  # no approvals here
    return AgentSessionFlow(_runner(scripted_reply(log_path)), flow_type=flow_type)


@contextmanager
def scripted_runner(
    model_script: Sequence[Mapping[str, Any]], log_path: str
) -> Iterator[LangGraphRunner]:
    """The same graph with a model that answers `model_script` (run-state fixtures)."""
    del log_path
    script = ModelScript(model_script)

    def reply(messages: list[BaseMessage]) -> AIMessage:
        results = trailing_tool_messages(messages)
        answer = script.next_reply(results=[(str(r.name), str(r.text)) for r in results])
        if "text" in answer:
            return AIMessage(content=answer["text"])
        calls = [
            {"id": c["id"], "name": c["name"], "args": c["arguments"]} for c in answer["tool_calls"]
        ]
        return AIMessage(content="", tool_calls=calls)

    yield _runner(reply)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--flow-type", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--interrupt-deadline", type=float, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    flow = build_flow(args.flow_type, args.log, args.interrupt_deadline)
    run_worker([flow], server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
