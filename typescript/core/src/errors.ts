/**
 * The errors every TypeScript adapter shares, defined once (the Python kit's
 * `dex_agents.runner` errors): stored data a runner cannot read ends the turn
 * without a retry, whichever adapter wrote it.
 *
 * @module
 */

/**
 * The framework run state cannot be read: another runner's state, another schema version, or corrupt.
 * RunModel ends the turn at once with `cannot resume the turn: <message>`.
 */
export class RunStateError extends Error {
  override name = "RunStateError";
}

/**
 * The runner ends the turn as failed, with this message, without the Step's
 * retries: a reason of the framework's own that every retry would meet again
 * (a guardrail tripped, the framework refused its stored state). The session
 * stores the unfinished turn and the turn-failure note, as for any failed turn.
 */
export class TurnFailed extends Error {
  override name = "TurnFailed";
}
