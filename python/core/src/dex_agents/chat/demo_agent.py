"""The agent `dex-agents chat` talks to by default: a support agent on a scripted model.

It needs no key and answers the same way every run, by rules on the turn's user
message (a retried or restarted model call answers alike):

- a message mentioning `refund`: looks the order up (a read tool) and refunds it
  (a non-idempotent write that waits for your approval), then sums up;
- a message mentioning `ask`: asks you a question with choices (`ask_user`);
- `/plan <text>`: writes a three-task plan; `/execute` runs it (`write_todos`);
- anything else: thinks aloud (reasoning deltas) and answers.

Text streams word by word, so the spinner, the live text and a Worker killed
mid-answer are visible. With `DEX_AGENTS_CHAT_MODEL` set to a LiteLLM model name
(e.g. `openai/gpt-4o-mini`, with the provider's key in its usual variable, and
`pip install 'dex-agents[litellm]'`), the same agent runs on that model instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping, Sequence

from dex_agents_contracts import ToolEffect

from dex_agents._runner.policies import ToolPolicy
from dex_agents.models import (
    ModelClient,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ScriptedModelClient,
    ScriptedResponse,
    ToolResultMessage,
    UserMessage,
)
from dex_agents.models import ModelToolCall as Call
from dex_agents.options import AgentSessionOptions
from dex_agents.session import AgentSessionFlow
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, ToolContext, tool

__all__ = ["DemoModel", "flow"]

MODEL_VARIABLE = "DEX_AGENTS_CHAT_MODEL"
_PLAN_NOTES = ("[Dex] The current plan", "[Dex] There is no plan yet.")
_APPROVED_PLAN = "[Dex] The user approved plan revision"


def _reply(
    *,
    text: str | None = None,
    reasoning: str | None = None,
    tool_calls: Sequence[Call] = (),
    usage: ModelUsage,
) -> ScriptedResponse:
    """A response streamed word by word after a short pause, like a model's."""
    return ScriptedResponse(
        text=text,
        reasoning=reasoning,
        tool_calls=tool_calls,
        usage=usage,
        delay_seconds=0.2,
        delta_interval_seconds=0.05,
    )


def _turn(request: ModelRequest) -> tuple[str, int, bool]:
    """The turn's user text, the tool results after it, and whether this is a planning turn."""
    results = 0
    text = ""
    for message in reversed(request.messages):
        if isinstance(message, ToolResultMessage):
            results += 1
        elif isinstance(message, UserMessage) and not message.text.startswith(_PLAN_NOTES):
            text = message.text
            break
    planning = any(
        isinstance(m, UserMessage) and m.text.startswith(_PLAN_NOTES) for m in request.messages
    )
    return text, results, planning


class DemoModel:
    """A rule-based ModelClient: deterministic, streamed, no network."""

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await ScriptedModelClient([self.answer(request)]).complete(request)

    def answer(self, request: ModelRequest) -> ScriptedResponse:
        text, results, planning = _turn(request)
        usage = ModelUsage(input_tokens=40 * (1 + len(request.messages)), output_tokens=24)
        lowered = text.lower()
        if text.startswith(_APPROVED_PLAN):
            return self._execute_plan(request, results, usage)
        if planning and results == 0:
            tasks = [f"Understand: {text[:40]}", "Do the work", "Report back"]
            todos = {"todos": [{"content": t, "status": "pending"} for t in tasks]}
            return _reply(
                text="Here is a plan.",
                tool_calls=(
                    Call(
                        tool_call_id="plan-1", tool_name="write_todos", arguments=json.dumps(todos)
                    ),
                ),
                usage=usage,
            )
        if planning:
            return _reply(
                text="The plan is ready: /plan shows it, /execute runs it.",
                usage=usage,
            )
        if "refund" in lowered and results == 0:
            order = _order_id(text)
            return _reply(
                text="I'll check the order and prepare the refund.",
                reasoning="The user wants a refund; look the order up, then refund it.",
                tool_calls=(
                    Call(
                        tool_call_id="call-order",
                        tool_name="get_order",
                        arguments=json.dumps({"order_id": order}),
                    ),
                    Call(
                        tool_call_id="call-refund",
                        tool_name="issue_refund",
                        arguments=json.dumps({"order_id": order, "amount_eur": 42.0}),
                    ),
                ),
                usage=usage,
            )
        if "refund" in lowered:
            outputs = [m.output for m in request.messages if isinstance(m, ToolResultMessage)]
            refunded = any("refund_id" in o for o in outputs[-results:])
            summary = (
                f"Order {_order_id(text)} was delivered for 42.00 EUR and I refunded "
                "the full amount."
                if refunded
                else f"Order {_order_id(text)} was delivered for 42.00 EUR; the refund "
                "was not made."
            )
            return _reply(text=summary, usage=usage)
        if "ask" in lowered and results == 0:
            question = {
                "question": "Which colour do you prefer?",
                "choices": ["red", "green", "blue"],
            }
            return _reply(
                tool_calls=(
                    Call(
                        tool_call_id="call-ask",
                        tool_name="ask_user",
                        arguments=json.dumps(question),
                    ),
                ),
                usage=usage,
            )
        if "ask" in lowered:
            answer = next(
                (m.output for m in reversed(request.messages) if isinstance(m, ToolResultMessage)),
                "",
            )
            with contextlib.suppress(ValueError, AttributeError):
                answer = str(json.loads(answer).get("answer", answer))
            return _reply(text=f"You answered: {answer}", usage=usage)
        return _reply(
            text=(
                f"You said: {text}. I am the scripted demo model; ask me to refund order "
                f"A-1001, to ask you something, or send /plan <goal>."
            ),
            reasoning="Nothing to look up; answer directly.",
            usage=usage,
        )

    @staticmethod
    def _execute_plan(request: ModelRequest, results: int, usage: ModelUsage) -> ScriptedResponse:
        tasks = []
        for message in request.messages:
            if isinstance(message, UserMessage) and message.text.startswith(_PLAN_NOTES):
                tasks = [
                    line.split("] ", 1)[1]
                    for line in message.text.splitlines()
                    if line.startswith("- [")
                ]
        if results == 0 and tasks:
            todos = {"todos": [{"content": t, "status": "completed"} for t in tasks]}
            return _reply(
                text="Working through the plan.",
                tool_calls=(
                    Call(
                        tool_call_id="exec-1", tool_name="write_todos", arguments=json.dumps(todos)
                    ),
                ),
                usage=usage,
            )
        return _reply(text="Every task of the plan is done.", usage=usage)


def _order_id(text: str) -> str:
    found = re.search(r"[A-Z]-\d+", text)
    return found.group(0) if found else "A-1001"


def get_order(order_id: str) -> dict[str, str]:
    """Look up an order by its ID.

    Args:
        order_id: The order's ID, such as A-1001.
    """
    return {"order_id": order_id, "status": "delivered", "total": "42.00 EUR"}


def issue_refund(order_id: str, amount_eur: float, context: ToolContext) -> dict[str, str]:
    """Refund an order; money moves, so every call waits for the user's approval.

    Args:
        order_id: The order to refund.
        amount_eur: The amount in euros.
    """
    return {
        "refund_id": f"rf-{order_id}",
        "amount": f"{amount_eur:.2f} EUR",
        "key": context.idempotency_key,
    }


def _model() -> ModelClient:
    name = os.environ.get(MODEL_VARIABLE)
    if not name:
        return DemoModel()
    from dex_agents.models.litellm import LiteLLMModelClient  # noqa: PLC0415 - the litellm extra

    return LiteLLMModelClient(name)


def flow() -> AgentSessionFlow:
    built_ins: Sequence[str] = ("ask_user", "write_todos")
    definition = AgentDefinition(
        name="support",
        instructions="You are a support agent. Check an order before refunding it.",
        tools=[
            tool(get_order, policy=ToolPolicy(effect=ToolEffect.READ)),
            tool(issue_refund, policy=ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)),
        ],
        model=_model(),
    )
    options = AgentSessionOptions(
        built_in_tools=tuple(built_ins),  # type: ignore[arg-type]
        plan_mode_enabled=True,
        interrupt_deadline=None,
    )
    return AgentSessionFlow(StepwiseRunner(definition), flow_type="ChatDemoAgent", options=options)
