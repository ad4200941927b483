/**
 * The UI stream resume token (`u1.`) that `dex_agents.http` puts in the SSE id
 * of every UI chunk: the Dex position of the chunk plus the parts the browser
 * holds open. The transport only carries tokens back; decoding serves tools and
 * tests that need to see which turn a token names.
 *
 * @module
 */

const PREFIX = "u1.";

/** The fields of a `u1.` token, in its encoded order. */
export interface UiStreamToken {
  readonly sessionId: string;
  readonly turnId: string;
  /** Dex token to read the turn from ("" = the oldest retained event). */
  readonly start: string;
  /** Dex token of the last event read when the chunk was made. */
  readonly position: string;
  /** Index of the chunk among those made at `position`. */
  readonly chunk: number;
  readonly openParts: readonly string[];
}

/** `u1.` + unpadded base64url of the compact JSON array of the fields. */
export function encodeUiStreamToken(token: UiStreamToken): string {
  const fields = [
    token.sessionId,
    token.turnId,
    token.start,
    token.position,
    token.chunk,
    [...token.openParts],
  ];
  return PREFIX + Buffer.from(JSON.stringify(fields), "utf8").toString("base64url");
}

/** The token `encodeUiStreamToken` (or the Python server) wrote; throws naming what is wrong. */
export function decodeUiStreamToken(text: string): UiStreamToken {
  const shown = JSON.stringify(text.slice(0, 40));
  if (!text.startsWith(PREFIX)) {
    throw new Error(`UI stream token ${shown} does not start with "${PREFIX}"`);
  }
  const body = text.slice(PREFIX.length);
  let fields: unknown;
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(body)) throw new Error("not base64url");
    fields = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    throw new Error(`UI stream token ${shown} is malformed`);
  }
  if (
    !Array.isArray(fields) ||
    fields.length !== 6 ||
    !fields.slice(0, 4).every((f) => typeof f === "string") ||
    !Number.isSafeInteger(fields[4]) ||
    (fields[4] as number) < 0 ||
    !Array.isArray(fields[5]) ||
    !(fields[5] as unknown[]).every((p) => typeof p === "string")
  ) {
    throw new Error(`UI stream token ${shown} is malformed`);
  }
  return {
    sessionId: fields[0] as string,
    turnId: fields[1] as string,
    start: fields[2] as string,
    position: fields[3] as string,
    chunk: fields[4] as number,
    openParts: fields[5] as string[],
  };
}
