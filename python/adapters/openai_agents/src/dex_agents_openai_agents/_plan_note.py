"""The plan note before the turn's messages, in every model call of a run.

A resumed run replays the input its RunState keeps, so the note cannot be part
of that input: it would show the plan as it was when the turn began. The SDK's
`call_model_input_filter` runs before each model call instead, and puts the note
for the plan as the session holds it now before the turn's first message (the
application's own filter, if any, then sees the input with the note).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from agents import RunConfig
from agents.run_config import CallModelData, ModelInputData
from dex_agents._runner.plan_mode import build_plan_note
from dex_agents.runner import AgentTurnContext
from openai.types.responses import EasyInputMessageParam

__all__ = ["with_plan_note"]


def with_plan_note(config: RunConfig | None, turn: AgentTurnContext) -> RunConfig | None:
    """`config` with a model-input filter that shows the turn's plan note; `config` as it
    is when there is no note to show."""
    note = build_plan_note(turn.plan, turn.interaction_mode)
    if note is None:
        return config
    # The run's input starts with one item per stored message (history_from_stored);
    # the note is a user message as `user_item` writes one.
    before = sum(1 for message in turn.messages if message.turn_id != turn.turn_id)
    base = config if config is not None else RunConfig()
    own = base.call_model_input_filter

    async def show_note(data: CallModelData[Any]) -> ModelInputData:
        items = list(data.model_data.input)
        shown: EasyInputMessageParam = {"role": "user", "content": note}
        noted = ModelInputData(
            input=[*items[:before], shown, *items[before:]],
            instructions=data.model_data.instructions,
        )
        if own is None:
            return noted
        answer = own(dataclasses.replace(data, model_data=noted))
        result: ModelInputData = await answer if inspect.isawaitable(answer) else answer
        return result

    return dataclasses.replace(base, call_model_input_filter=show_note)
