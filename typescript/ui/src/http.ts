/**
 * Shared HTTP plumbing: endpoint URLs and the error a refused request raises.
 *
 * @module
 */

/** A response the server refused: its status and the server's `error` text. */
export class DexHttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "DexHttpError";
    this.status = status;
  }
}

export type FetchFunction = typeof globalThis.fetch;

/** `base` + `/sessions/{id}/` + `rest`, with the session id escaped. */
export function sessionUrl(base: string, sessionId: string, rest: string): string {
  return `${base.replace(/\/+$/, "")}/sessions/${encodeURIComponent(sessionId)}/${rest}`;
}

/** A DexHttpError from a non-2xx response, with the server's `{"error": ...}` text when there is one. */
export async function refusal(response: Response, what: string): Promise<DexHttpError> {
  let detail = "";
  try {
    const text = await response.text();
    try {
      const body: unknown = JSON.parse(text);
      detail =
        typeof body === "object" && body !== null && typeof (body as { error?: unknown }).error === "string"
          ? (body as { error: string }).error
          : text;
    } catch {
      detail = text;
    }
  } catch {
    detail = response.statusText;
  }
  return new DexHttpError(response.status, `${what} answered ${response.status}: ${detail}`);
}
