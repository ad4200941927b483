"""Flows the integration tests run through the real SDK Worker.

Imported both by the test process (Client and in-process Workers) and by the
child Worker process that tests SIGKILL. In-process coordination uses the
module-level events below; the child process signals through Streams instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from datetime import timedelta

import dex

# -- shared persistence ---------------------------------------------------------

inbox = dex.Channel("inbox", str)
tool_done = dex.ChannelMap("tool-done", str)
balance = dex.Attribute("balance", int)
notes = dex.AttributeMap("notes", str)
progress = dex.Stream("progress", str, 64)
marks = dex.Stream("marks", str, 1 << 20)

HOLDER_ENTERED = threading.Event()
HOLDER_RELEASE = threading.Event()
FLAKY_CALLS: dict[str, int] = {}
_GUARD = threading.Lock()


def _bump(key: str) -> int:
    with _GUARD:
        FLAKY_CALLS[key] = FLAKY_CALLS.get(key, 0) + 1
        return FLAKY_CALLS[key]


# -- channel wait -> execute ------------------------------------------------------


class Waiter(dex.Step[str]):
    def wait_for(self, context: dex.Context, input: str) -> dex.Wait:
        return dex.Wait.until(inbox.for_one())

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        (message,) = inbox.results(context)
        return dex.graceful_complete(f"{input}:{message}")


class Finish(dex.Step[str]):
    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        return dex.graceful_complete(input)


class Chat(dex.Flow[str]):
    def get_flow_type(self) -> str:
        return "Chat"

    def get_steps(self) -> dex.StepList[str]:
        return dex.StepList.start_step(Waiter()).other_steps(Finish())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(inbox, balance)

    @dex.rpc
    def send(self, context: dex.Context, text: str) -> dex.RPCResult[int]:
        inbox.publish(context, text)
        return dex.RPCResult(inbox.size(context))

    @dex.rpc
    def interrupt(self, context: dex.Context, text: str) -> dex.RPCResult[bool]:
        return dex.RPCResult(
            True, next_steps=(dex.StepMovement.of(Finish, text),)
        ).with_canceling_steps(Waiter)

    @dex.rpc(is_transactional=True, load_channels=(inbox,))
    def drop(self, context: dex.Context, message_id: str) -> dex.RPCResult[int]:
        inbox.delete(context, message_id)
        balance.set(context, 99)
        return dex.RPCResult(len(inbox.pending_messages(context)))

    @dex.rpc(load_channels=(inbox,))
    def pending(self, context: dex.Context) -> dex.RPCResult[list[str]]:
        return dex.RPCResult([m.message_id for m in inbox.pending_messages(context)])

    @dex.rpc
    def set_balance(self, context: dex.Context, value: int) -> dex.RPCResult[int]:
        balance.set(context, value)
        return dex.RPCResult(value)

    @dex.rpc
    def read_balance(self, context: dex.Context) -> dex.RPCResult[int]:
        return dex.RPCResult(balance.get(context))

    @dex.rpc
    def explode(self, context: dex.Context) -> dex.RPCResult[int]:
        raise ValueError("rpc exploded")


# -- fan-out ------------------------------------------------------------------------


class Leaf(dex.Step[int]):
    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        notes.set(context, str(input), f"{input}@{context.attempt}")
        return dex.graceful_complete(input)


class Fan(dex.Step[int]):
    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        return dex.go_to_many(*(dex.StepMovement.of(Leaf, i) for i in range(input)))


class SlowLeaf(dex.Step[int]):
    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        time.sleep(0.2)
        return dex.graceful_complete(context.attempt)


class SlowFan(dex.Step[int]):
    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        return dex.go_to_many(*(dex.StepMovement.of(SlowLeaf, i) for i in range(input)))


class FanOut(dex.Flow[int]):
    def get_flow_type(self) -> str:
        return "FanOut"

    def get_steps(self) -> dex.StepList[int]:
        return dex.StepList.start_step(Fan()).other_steps(Leaf())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(notes)

    @dex.rpc(load_attribute_maps=(notes,))
    def count_notes(self, context: dex.Context) -> dex.RPCResult[int]:
        return dex.RPCResult(notes.get_map_size(context))

    @dex.rpc
    def note_keys_unloaded(self, context: dex.Context) -> dex.RPCResult[int]:
        return dex.RPCResult(notes.get_map_size(context))


class SlowFanOut(dex.Flow[int]):
    def get_flow_type(self) -> str:
        return "SlowFanOut"

    def get_steps(self) -> dex.StepList[int]:
        return dex.StepList.start_step(SlowFan()).other_steps(SlowLeaf())


# -- timers ---------------------------------------------------------------------------


class Sleeper(dex.Step[int]):
    def wait_for(self, context: dex.Context, input: int) -> dex.Wait:
        return dex.Wait.any_of(
            dex.Timer.by_duration(timedelta(seconds=input), condition_id="nap"), inbox.for_one()
        )

    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        return dex.graceful_complete(
            f"fired={context.has_timer_fired(0)} got={list(inbox.results(context))}"
        )


class PairWait(dex.Step[int]):
    """All-of a timer and two messages: used to prove both survive a server kill."""

    def wait_for(self, context: dex.Context, input: int) -> dex.Wait:
        return dex.Wait.all_of(dex.Timer.by_duration(timedelta(seconds=input)), inbox.for_n(2))

    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        return dex.graceful_complete(
            f"fired={context.has_timer_fired(0)} got={list(inbox.results(context))}"
        )


class Timers(dex.Flow[int]):
    def get_flow_type(self) -> str:
        return "Timers"

    def get_steps(self) -> dex.StepList[int]:
        return dex.StepList.start_step(Sleeper()).other_steps(PairWait())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(inbox)

    @dex.rpc
    def send(self, context: dex.Context, text: str) -> dex.RPCResult[int]:
        inbox.publish(context, text)
        return dex.RPCResult(inbox.size(context))

    @dex.rpc
    def pair(self, context: dex.Context, seconds: int) -> dex.RPCResult[bool]:
        return dex.RPCResult(
            True, next_steps=(dex.StepMovement.of(PairWait, seconds),)
        ).with_canceling_steps(Sleeper)


# -- locks ------------------------------------------------------------------------------


class Holder(dex.Step[int]):
    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(execute_lock_attributes=(balance.lock(),))

    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        if input < 0:
            HOLDER_ENTERED.set()
            HOLDER_RELEASE.wait(30)
        balance.set(context, balance.get(context) + 1)
        return dex.graceful_complete(balance.get(context))


class Start2(dex.Step[int]):
    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        return dex.go_to_many(*(dex.StepMovement.of(Holder, input) for _ in range(2)))


class Locks(dex.Flow[int]):
    def get_flow_type(self) -> str:
        return "Locks"

    def get_steps(self) -> dex.StepList[int]:
        return dex.StepList.start_step(Start2()).other_steps(Holder())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(balance)

    @dex.rpc(lock_attributes=(balance.lock(),))
    def deposit(self, context: dex.Context, amount: int) -> dex.RPCResult[int]:
        balance.set(context, balance.get(context) + amount)
        return dex.RPCResult(balance.get(context))


# -- failures, retries, timeouts, heartbeats ---------------------------------------------


class Recover(dex.Step[str]):
    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        error = context.recovery_error
        assert error is not None
        return dex.graceful_complete(f"recovered {input}: {error.error_type}: {error.detail}")


_ONE_SHOT = dex.RetryPolicy(maximum_attempts=1)


class Boom(dex.Step[str]):
    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(execute_retry=_ONE_SHOT).on_execute_failure_proceed_to(Recover)

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        raise RuntimeError(f"boom {input}")


class Flaky(dex.Step[str]):
    """Fails attempt 1 after a heartbeat checkpoint; attempt 2 reads the checkpoint."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            execute_retry=dex.RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)
        )

    def execute(
        self, context: dex.Context, input: str
    ) -> Generator[dex.StepOutput, None, dex.StepDecision]:
        if context.attempt == 1:
            yield dex.heartbeat(7)
            raise RuntimeError("first attempt fails")
        checkpoint = context.get_last_heartbeat_value(int)
        return dex.graceful_complete(f"attempt={context.attempt} checkpoint={checkpoint}")


class Slow(dex.Step[str]):
    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            execute_method_timeout=timedelta(seconds=1), execute_retry=_ONE_SHOT
        ).on_execute_failure_proceed_to(Recover)

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        deadline = time.monotonic() + 30
        while not context.is_cancellation_requested() and time.monotonic() < deadline:
            time.sleep(0.02)
        return dex.graceful_complete("not cancelled")


class Hang(dex.Step[str]):
    """Signals through a Stream that it runs, then hangs until killed (single attempt)."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(execute_retry=_ONE_SHOT).on_execute_failure_proceed_to(Recover)

    def execute(
        self, context: dex.Context, input: str
    ) -> Generator[dex.StepOutput, None, dex.StepDecision]:
        yield marks.write(context, f"hang attempt {context.attempt}")
        time.sleep(120)
        return dex.graceful_complete("hang finished")


class HangOnce(dex.Step[str]):
    """Hangs on attempt 1 (to be killed), completes on a later attempt."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            execute_retry=dex.RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)
        )

    def execute(
        self, context: dex.Context, input: str
    ) -> Generator[dex.StepOutput, None, dex.StepDecision]:
        if context.attempt == 1:
            yield marks.write(context, "hangonce attempt 1")
            time.sleep(120)
        return dex.graceful_complete(f"done on attempt {context.attempt}")


class Stall(dex.Step[str]):
    """Sends no frame for longer than its heartbeat timeout."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            heartbeat_timeout=timedelta(seconds=1), execute_retry=_ONE_SHOT
        ).on_execute_failure_proceed_to(Recover)

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        deadline = time.monotonic() + 30
        while not context.is_cancellation_requested() and time.monotonic() < deadline:
            time.sleep(0.02)
        return dex.graceful_complete("not cancelled")


class Beating(dex.Step[str]):
    """Runs longer than its heartbeat timeout but heartbeats often enough."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(heartbeat_timeout=timedelta(seconds=1), execute_retry=_ONE_SHOT)

    def execute(
        self, context: dex.Context, input: str
    ) -> Generator[dex.StepOutput, None, dex.StepDecision]:
        for i in range(8):
            time.sleep(0.25)
            yield dex.heartbeat(i)
        return dex.graceful_complete(f"beat attempt={context.attempt}")


class Resumable(dex.Step[str]):
    """Attempt 1 runs until its call is severed (server killed); a later attempt completes."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            execute_retry=dex.RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)
        )

    def execute(
        self, context: dex.Context, input: str
    ) -> Generator[dex.StepOutput, None, dex.StepDecision]:
        if context.attempt == 1:
            yield marks.write(context, "resumable attempt 1")
            deadline = time.monotonic() + 30
            while not context.is_cancellation_requested() and time.monotonic() < deadline:
                time.sleep(0.02)
            raise RuntimeError("attempt 1 was severed")
        return dex.graceful_complete(f"resumed on attempt {context.attempt}")


class Failer(dex.Step[str]):
    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        return dex.force_fail(f"gave up on {input}")


class Later(dex.Step[str]):
    """Asks for a specific retry delay on attempt 1 (retry_after)."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            execute_retry=dex.RetryPolicy(
                initial_interval=timedelta(seconds=60), maximum_attempts=2
            )
        )

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        if context.attempt == 1:
            raise dex.retry_after(1, RuntimeError("not ready"))
        return dex.graceful_complete(f"later attempt={context.attempt}")


class Ops(dex.Flow[None]):
    def get_flow_type(self) -> str:
        return "Ops"

    def get_steps(self) -> dex.StepList[None]:
        return dex.StepList.without_start_step(
            Boom(),
            Recover(),
            Flaky(),
            Slow(),
            Hang(),
            HangOnce(),
            OpsWriter(),
            Stall(),
            Beating(),
            Resumable(),
            Failer(),
            Later(),
        )

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(marks, progress)

    @dex.rpc
    def run(self, context: dex.Context, step: str) -> dex.RPCResult[bool]:
        kinds: dict[str, type[dex.Step[str]]] = {
            "boom": Boom,
            "flaky": Flaky,
            "slow": Slow,
            "hang": Hang,
            "hangonce": HangOnce,
            "writer": OpsWriter,
            "stall": Stall,
            "beating": Beating,
            "resumable": Resumable,
            "failer": Failer,
            "later": Later,
        }
        return dex.RPCResult(True, next_steps=(dex.StepMovement.of(kinds[step], step),))


class OpsWriter(dex.Step[str]):
    def execute(
        self, context: dex.Context, input: str
    ) -> Generator[dex.StepOutput, None, dex.StepDecision]:
        for i in range(3):
            yield marks.write(context, f"m{i}")
        yield progress.write(context, "x" * 40)
        yield progress.write(context, "y" * 40)
        return dex.graceful_complete(input)


# -- conditions, cancel lists, wait failures, hard deletes, timeouts -----------------

secret = dex.Attribute("api-key", str, hard_delete_on_null=True)


class Combo(dex.Step[str]):
    """ANY_COMBINATION: both tool results, or a (long) timer."""

    def wait_for(self, context: dex.Context, input: str) -> dex.Wait:
        return dex.Wait.any_combination_of(
            dex.ConditionCombination.of(
                tool_done.for_one("a", condition_id="a"), tool_done.for_one("b", condition_id="b")
            ),
            dex.ConditionCombination.of(
                dex.Timer.by_duration(timedelta(hours=1), condition_id="t")
            ),
        )

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        (a,) = tool_done.results(context, "a")
        (b,) = tool_done.results(context, "b")
        return dex.graceful_complete(f"{a}+{b} timer={context.has_timer_fired(0)}")


class Greedy(dex.Step[str]):
    def wait_for(self, context: dex.Context, input: str) -> dex.Wait:
        return dex.Wait.until(inbox.at_least(2))

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        return dex.graceful_complete(",".join(inbox.results(context)))


class Idle2(dex.Step[str]):
    def wait_for(self, context: dex.Context, input: str) -> dex.Wait:
        return dex.Wait.until(dex.Timer.by_duration(timedelta(hours=1)))

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        return dex.dead_end()


class Quick(dex.Step[str]):
    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        return dex.dead_end().with_canceling_sibling_steps(Idle2)


class Fork(dex.Step[str]):
    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        return dex.go_to_many(
            dex.StepMovement.of(Idle2, "x"),
            dex.StepMovement.of(Idle2, "y"),
            dex.StepMovement.of(Quick, "q"),
        )


class ProceedWait(dex.Step[str]):
    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            wait_for_retry=_ONE_SHOT,
            wait_for_failure=dex.WaitForFailurePolicy.PROCEED,
            execute_durability=dex.StepDurability.ASYNC,
        )

    def wait_for(self, context: dex.Context, input: str) -> dex.Wait:
        raise RuntimeError("wait exploded")

    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        error = context.recovery_error
        detail = error.detail if error is not None else "none"
        return dex.graceful_complete(f"proceed failed={context.wait_for_method_failed()} {detail}")


class UseSecret(dex.Step[str]):
    def execute(self, context: dex.Context, input: str) -> dex.StepDecision:
        value = secret.get(context)
        secret.delete(context)
        return dex.graceful_complete(value)


class EmptyCheck(dex.Step[int]):
    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        return dex.force_complete_if_channels_empty(
            "empty", dex.StepMovement.of(Drain, input), inbox
        )


class Drain(dex.Step[int]):
    def wait_for(self, context: dex.Context, input: int) -> dex.Wait:
        return dex.Wait.until(inbox.for_one())

    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        return dex.go_to(EmptyCheck, input)


class Features(dex.Flow[str]):
    def get_flow_type(self) -> str:
        return "Features"

    def get_steps(self) -> dex.StepList[str]:
        return dex.StepList.start_step(Combo()).other_steps(
            Greedy(), Idle2(), Quick(), Fork(), ProceedWait(), UseSecret(), EmptyCheck(), Drain()
        )

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(inbox, tool_done, secret)

    def handle_timeout(self, context: dex.Context) -> dex.StepDecision:
        return dex.force_complete("timed out")

    @dex.rpc
    def tool(self, context: dex.Context, instance: str) -> dex.RPCResult[int]:
        tool_done.publish(context, instance, f"r-{instance}")
        return dex.RPCResult(tool_done.get_map_size(context))

    @dex.rpc
    def send(self, context: dex.Context, texts: list[str]) -> dex.RPCResult[int]:
        for text in texts:
            inbox.publish(context, text)
        return dex.RPCResult(len(texts))

    @dex.rpc
    def go(self, context: dex.Context, step: str) -> dex.RPCResult[bool]:
        kinds: dict[str, type[dex.Step[str]]] = {
            "greedy": Greedy,
            "fork": Fork,
            "proceed": ProceedWait,
            "secret": UseSecret,
        }
        return dex.RPCResult(
            True, next_steps=(dex.StepMovement.of(kinds[step], step),)
        ).with_canceling_steps(Combo)

    @dex.rpc(load_channels=(inbox,))
    def pending(self, context: dex.Context) -> dex.RPCResult[list[str]]:
        return dex.RPCResult([f"{m.message_id}={m.value}" for m in inbox.pending_messages(context)])

    @dex.rpc(is_transactional=True)
    def drop(self, context: dex.Context, message_id: str) -> dex.RPCResult[bool]:
        inbox.delete(context, message_id)
        return dex.RPCResult(True)

    @dex.rpc
    def check_empty(self, context: dex.Context, count: int) -> dex.RPCResult[bool]:
        for i in range(count):
            inbox.publish(context, f"m{i}")
        return dex.RPCResult(
            True, next_steps=(dex.StepMovement.of(EmptyCheck, count),)
        ).with_canceling_steps(Combo)


# -- request-ID replays -------------------------------------------------------------

tally = dex.Attribute("tally", int)
TALLY_ENTERED = threading.Event()
TALLY_RELEASE = threading.Event()


class Noop(dex.Step[None]):
    def execute(self, context: dex.Context, input: None) -> dex.StepDecision:
        return dex.dead_end()


class Tally(dex.Flow[None]):
    """No start Step, so it stays RUNNING; its RPCs count what they applied."""

    def get_flow_type(self) -> str:
        return "Tally"

    def get_steps(self) -> dex.StepList[None]:
        return dex.StepList.without_start_step(Noop())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(tally, inbox)

    @dex.rpc(lock_attributes=(tally.lock(),))
    def add(self, context: dex.Context, amount: int) -> dex.RPCResult[int]:
        tally.set(context, tally.get(context) + amount)
        return dex.RPCResult(tally.get(context))

    @dex.rpc
    def add_plain(self, context: dex.Context, amount: int) -> dex.RPCResult[int]:
        tally.set(context, tally.get(context) + amount)
        return dex.RPCResult(tally.get(context))

    @dex.rpc
    def read(self, context: dex.Context) -> dex.RPCResult[int]:
        return dex.RPCResult(tally.get(context))

    @dex.rpc(is_transactional=True)
    def peek(self, context: dex.Context) -> dex.RPCResult[int]:
        return dex.RPCResult(tally.get(context))

    @dex.rpc(lock_attributes=(tally.lock(),))
    def add_after_a_failure(self, context: dex.Context, key: str) -> dex.RPCResult[int]:
        if _bump(key) == 1:
            raise RuntimeError("the first call fails")
        tally.set(context, tally.get(context) + 1)
        return dex.RPCResult(tally.get(context))

    @dex.rpc(lock_attributes=(tally.lock(),))
    def add_when_released(self, context: dex.Context, key: str) -> dex.RPCResult[int]:
        _bump(key)
        TALLY_ENTERED.set()
        TALLY_RELEASE.wait(30)
        tally.set(context, tally.get(context) + 1)
        return dex.RPCResult(tally.get(context))


CHAT = Chat()
FAN_OUT = FanOut()
SLOW_FAN_OUT = SlowFanOut()
TIMERS = Timers()
LOCKS = Locks()
OPS = Ops()
FEATURES = Features()
TALLY = Tally()
REGISTRY = dex.Registry((CHAT, FAN_OUT, SLOW_FAN_OUT, TIMERS, LOCKS, OPS, FEATURES, TALLY))
