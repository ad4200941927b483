/**
 * A runner's poll interval in seconds as the runner service's int32
 * milliseconds: a huge or infinite interval would overflow the field, so it
 * is capped; the Python session rounds it into 1 s .. 1 day anyway.
 *
 * @module
 */

/** The largest value of the int32 `poll_interval_milliseconds` fields. */
export const MAX_POLL_INTERVAL_MILLISECONDS = 2_147_483_647;

/**
 * Whole milliseconds, rounded up, in 0 ..= int32 maximum; a negative interval
 * is 0 (poll again as soon as the session allows).
 *
 * @throws TypeError for NaN or a value that is not a number: no wire value says
 *   "not a number", and sending 0 would hide the runner's bug.
 */
export function pollIntervalMilliseconds(seconds: number, outcome: string): number {
  if (typeof seconds !== "number" || Number.isNaN(seconds)) {
    throw new TypeError(`a ${outcome} outcome's pollIntervalSeconds must be a number, got ${String(seconds)}`);
  }
  if (seconds <= 0) return 0;
  return Math.min(MAX_POLL_INTERVAL_MILLISECONDS, Math.ceil(seconds * 1000));
}
