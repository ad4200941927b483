"""Stepwise tools: Python functions with a JSON Schema and a policy.

A tool runs only in its own tool Step, through `execute_deferred_tool_call`, so
it may take a `ToolContext` parameter to read its idempotency key.
"""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, overload

import pydantic
import pydantic_core

from dex_agents import ToolPolicy
from dex_agents._runner.values import Heartbeat
from dex_agents.events import EventWriter
from dex_agents.models import ToolDefinition
from dex_agents.runner import ToolExecutionError, parse_tool_arguments

__all__ = ["Tool", "ToolContext", "tool"]

_DOC_SECTIONS = ("Args:", "Arguments:", "Returns:", "Raises:", "Yields:", "Examples:")


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """What a tool may know about its call; declare a parameter of this type to get it."""

    flow_id: str
    turn_id: str
    tool_call_id: str
    idempotency_key: str
    """`<flowId>/<turnId>/<toolCallId>`, the same on every attempt: pass it to the
    service the tool writes to, so a retried idempotent write takes effect once."""
    attempt: int
    """One-based attempt of the tool Step."""
    events: EventWriter
    heartbeat: Heartbeat
    tool_source_reference: str | None = None
    """The call record's reference, for a tool that a `ToolSource` made."""


class Tool:
    """A function the model can call; build one with `tool(...)`."""

    def __init__(
        self,
        function: Callable[..., object],
        *,
        name: str | None = None,
        description: str | None = None,
        policy: ToolPolicy | None = None,
        parameters: Mapping[str, object] | None = None,
        source_reference: str | None = None,
    ) -> None:
        """Wrap `function`.

        Args:
            function: A sync or async function; sync ones run in a worker thread.
            name: The model-facing name; the function's name when None.
            description: The model-facing description; the docstring's text when None.
            policy: Effect and approval; the session's `tool_policies` still win.
            parameters: An explicit JSON Schema; the function then receives the
                arguments object's keys unvalidated. Derived from type hints when None.
            source_reference: What a `ToolSource` needs to call the tool in its
                Step without a listing; stored as the call's `tool_source_reference`.
        """
        self.function = function
        self.source_reference = source_reference
        self.name = name or function.__name__
        self.policy = policy
        summary, arg_docs = _read_docstring(inspect.getdoc(function) or "")
        self.description = description if description is not None else summary
        self._context_parameter: str | None = None
        self._model: type[pydantic.BaseModel] | None = None
        if parameters is not None:
            self.parameters: Mapping[str, object] = parameters
            self._context_parameter = _context_parameter(function)
        else:
            self._model, self._context_parameter = _arguments_model(self.name, function, arg_docs)
            schema = self._model.model_json_schema()
            schema.pop("title", None)
            self.parameters = schema

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, policy={self.policy!r})"

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(
            name=self.name, description=self.description, parameters=self.parameters
        )

    async def invoke(self, arguments: str, context: ToolContext) -> str:
        """Run the function once with the model's arguments; returns the output text.

        Raises:
            ToolExecutionError: The arguments are invalid, or the function raised it.
        """
        kwargs = self._keyword_arguments(arguments)
        if self._context_parameter is not None:
            kwargs[self._context_parameter] = context
        if inspect.iscoroutinefunction(self.function):
            result = await self.function(**kwargs)
        else:
            result = await asyncio.to_thread(self.function, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        if isinstance(result, str):
            return result
        return pydantic_core.to_json(result).decode()

    def _keyword_arguments(self, arguments: str) -> dict[str, object]:
        value = parse_tool_arguments(arguments)
        if self._model is None:
            return value
        try:
            parsed = self._model.model_validate(value)
        except pydantic.ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in problem['loc']) or '(arguments)'}: "
                f"{problem['msg']}"
                for problem in error.errors(include_url=False)
            )
            raise ToolExecutionError(f"invalid {self.name} arguments: {problems}") from None
        return {field: getattr(parsed, field) for field in type(parsed).model_fields}


@overload
def tool(
    function: Callable[..., object],
    *,
    name: str | None = None,
    description: str | None = None,
    policy: ToolPolicy | None = None,
    parameters: Mapping[str, object] | None = None,
) -> Tool: ...


@overload
def tool(
    function: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    policy: ToolPolicy | None = None,
    parameters: Mapping[str, object] | None = None,
) -> Callable[[Callable[..., object]], Tool]: ...


def tool(
    function: Callable[..., object] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    policy: ToolPolicy | None = None,
    parameters: Mapping[str, object] | None = None,
) -> Tool | Callable[[Callable[..., object]], Tool]:
    """Make a `Tool` of a function; works as `tool(f, ...)`, `@tool` and `@tool(...)`."""

    def wrap(target: Callable[..., object]) -> Tool:
        return Tool(
            target, name=name, description=description, policy=policy, parameters=parameters
        )

    return wrap(function) if function is not None else wrap


def _context_parameter(function: Callable[..., object]) -> str | None:
    hints = typing.get_type_hints(function)
    names = [name for name, hint in hints.items() if hint is ToolContext and name != "return"]
    return names[0] if names else None


def _arguments_model(
    tool_name: str, function: Callable[..., object], arg_docs: Mapping[str, str]
) -> tuple[type[pydantic.BaseModel], str | None]:
    """A pydantic model of the function's parameters, minus its `ToolContext` one."""
    hints = typing.get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    context_parameter: str | None = None
    for parameter in inspect.signature(function).parameters.values():
        hint = hints.get(parameter.name, Any)
        if hint is ToolContext:
            context_parameter = parameter.name
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(
                f"tool {tool_name!r}: *args and **kwargs have no JSON Schema; "
                "pass `parameters=` explicitly"
            )
        default = ... if parameter.default is parameter.empty else parameter.default
        doc = arg_docs.get(parameter.name)
        # Only a docstring entry sets the description, so Annotated[..., Field(...)] keeps its own.
        field = pydantic.Field(default, description=doc) if doc else pydantic.Field(default)
        fields[parameter.name] = (hint, field)
    model = pydantic.create_model(
        f"{tool_name}_arguments",
        __config__=pydantic.ConfigDict(extra="forbid"),
        **fields,
    )
    return model, context_parameter


def _read_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The text before the first Google section, and the `Args:` entries."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in _DOC_SECTIONS:
            section = stripped
            current = None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args:", "Arguments:") and stripped:
            head, sep, rest = stripped.partition(":")
            name = head.split(" ", 1)[0]
            if (
                sep
                and name.isidentifier()
                and line.startswith(("    ", "\t"))
                and (current is None or not line.startswith(("        ", "\t\t")))
            ):
                current = name
                args[current] = rest.strip()
            elif current is not None:
                args[current] = f"{args[current]} {stripped}".strip()
    return "\n".join(summary).strip(), args
