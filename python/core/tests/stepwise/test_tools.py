"""Tools: schemas from type hints, one run per tool Step, errors the model sees."""

from __future__ import annotations

import threading
from typing import Annotated, Literal

import pydantic
import pytest
from dex_agents import ToolPolicy
from dex_agents.models import ScriptedModelClient, scripted_tool_calls
from dex_agents.runner import ToolExecutionError
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, Tool, ToolContext, tool
from dex_agents_contracts import ToolCallStatus, ToolEffect
from stepwise_support import FakeSession, run

SENT: list[tuple[str, str, int]] = []


def send_email(to: str, body: str, context: ToolContext) -> dict[str, object]:
    """Send an email.

    Args:
        to: The recipient's address.
        body: The text, which may
            span lines.
    """
    SENT.append((to, context.idempotency_key, context.attempt))
    return {"sent": True, "to": to}


async def lookup(
    item: Annotated[str, pydantic.Field(description="What to look up.")],
    kind: Literal["book", "film"] = "book",
    limit: int = 3,
) -> str:
    """Look something up."""
    if item == "missing":
        raise ToolExecutionError(f"no {kind} called {item!r}")
    return f"{kind}:{item}:{limit}"


def thread_name() -> str:
    return threading.current_thread().name


def session_with(*tools: Tool, calls: tuple[tuple[str, str, str], ...]) -> FakeSession:
    definition = AgentDefinition(
        tools=tools, model=ScriptedModelClient([scripted_tool_calls(*calls)])
    )
    session = FakeSession(runner=StepwiseRunner(definition))
    session.start_turn("Go")
    session.run_model()
    return session


def test_schema_from_type_hints_and_docstring() -> None:
    email = tool(send_email)
    assert email.name == "send_email"
    assert email.description == "Send an email."
    assert email.parameters == {
        "type": "object",
        "properties": {
            "to": {"type": "string", "title": "To", "description": "The recipient's address."},
            "body": {
                "type": "string",
                "title": "Body",
                "description": "The text, which may span lines.",
            },
        },
        "required": ["to", "body"],
        "additionalProperties": False,
    }
    found = tool(lookup, name="find", description="Find it.")
    assert (found.name, found.description) == ("find", "Find it.")
    properties = found.parameters["properties"]
    assert isinstance(properties, dict)
    assert properties["kind"] == {
        "enum": ["book", "film"],
        "type": "string",
        "title": "Kind",
        "default": "book",
    }
    assert properties["item"]["description"] == "What to look up."
    assert found.parameters["required"] == ["item"]


def test_decorator_forms() -> None:
    @tool
    def plain(x: int) -> int:
        return x

    @tool(policy=ToolPolicy(effect=ToolEffect.READ))
    def with_policy(x: int) -> int:
        return x

    assert isinstance(plain, Tool)
    assert with_policy.policy == ToolPolicy(effect=ToolEffect.READ)


def test_var_arguments_need_an_explicit_schema() -> None:
    def loose(*args: str) -> str:
        return ""

    with pytest.raises(TypeError, match="pass `parameters=` explicitly"):
        tool(loose)
    explicit = tool(loose, parameters={"type": "object"})
    assert explicit.parameters == {"type": "object"}


def test_execution_gets_the_idempotency_key() -> None:
    SENT.clear()
    session = session_with(
        tool(send_email), calls=(("mail-1", "send_email", '{"to":"a@b.c","body":"Hi"}'),)
    )
    session.finish("mail-1", ToolCallStatus.APPROVED)
    session.execute_and_record("mail-1", attempt=2)
    assert SENT == [("a@b.c", "session-1/turn-1/mail-1", 2)]
    record = session.tool_calls[0]
    assert record.status == ToolCallStatus.SUCCEEDED
    assert record.output == '{"sent":true,"to":"a@b.c"}'


def test_async_tool_with_defaults_and_a_tool_execution_error() -> None:
    session = session_with(
        tool(lookup),
        calls=(
            ("1", "lookup", '{"item":"Dune"}'),
            ("2", "lookup", '{"item":"missing","kind":"film"}'),
        ),
    )
    session.execute_and_record("1")
    session.execute_and_record("2")
    assert [(r.status, r.output, r.error) for r in session.tool_calls] == [
        (ToolCallStatus.SUCCEEDED, "book:Dune:3", None),
        (ToolCallStatus.FAILED, None, "no film called 'missing'"),
    ]


def test_sync_tools_run_in_a_worker_thread() -> None:
    session = session_with(tool(thread_name), calls=(("1", "thread_name", "{}"),))
    session.execute_and_record("1")
    assert session.tool_calls[0].output != threading.main_thread().name


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ("not json", "arguments must be a JSON object"),
        ("[1]", "arguments must be a JSON object"),
        ('{"item": NaN}', "arguments must be a JSON object"),
        ("{}", "invalid lookup arguments: item: Field required"),
        (
            '{"item":"x","kind":"song"}',
            "invalid lookup arguments: kind: Input should be 'book' or 'film'",
        ),
        (
            '{"item":"x","extra":1}',
            "invalid lookup arguments: extra: Extra inputs are not permitted",
        ),
    ],
)
def test_invalid_arguments_fail_visibly(arguments: str, error: str) -> None:
    session = session_with(tool(lookup), calls=(("1", "lookup", arguments),))
    session.execute_and_record("1")
    record = session.tool_calls[0]
    assert (record.status, record.error) == (ToolCallStatus.FAILED, error)


def test_an_unknown_tool_at_execution_fails_visibly() -> None:
    session = session_with(tool(lookup), calls=(("1", "lookup", "{}"),))
    session.runner = StepwiseRunner(
        AgentDefinition(tools=[tool(send_email)], model=ScriptedModelClient([]))
    )
    session.execute_and_record("1")
    assert (
        session.tool_calls[0].error == "unknown tool 'lookup'; this agent's tools are: send_email"
    )


def test_other_exceptions_fail_the_attempt() -> None:
    def broken() -> str:
        raise ConnectionError("service down")

    session = session_with(tool(broken), calls=(("1", "broken", "{}"),))
    with pytest.raises(ConnectionError):
        session.execute_and_record("1")


def test_definition_refuses_duplicate_names_and_missing_models() -> None:
    with pytest.raises(ValueError, match="two tools are named 'lookup'"):
        AgentDefinition(
            tools=[lookup, tool(send_email, name="lookup")], model=ScriptedModelClient([])
        )
    with pytest.raises(ValueError, match="exactly one of `model` and `model_resolver`"):
        AgentDefinition()


def test_a_tool_may_not_take_an_enabled_built_in_name() -> None:
    def ask_user(question: str) -> str:
        return question

    definition = AgentDefinition(tools=[ask_user], model=ScriptedModelClient([]))
    session = FakeSession(runner=StepwiseRunner(definition))
    session.enabled_built_in_tools = ("ask_user",)
    session.start_turn("Go")
    with pytest.raises(ValueError, match="'ask_user' uses the name of an enabled built-in"):
        run(session.runner.run_model_step(session.context()))
