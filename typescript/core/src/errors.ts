/**
 * The errors every TypeScript adapter shares, defined once (the Python kit's
 * `dex_agents.runner` errors): stored data a runner cannot read ends the turn
 * without a retry, whichever adapter wrote it.
 *
 * @module
 */

/** The framework run state cannot be read: another runner's state, another schema version, or corrupt. */
export class RunStateError extends Error {
  override name = "RunStateError";
}
