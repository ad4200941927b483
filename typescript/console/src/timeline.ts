/**
 * The Step timeline as a picture: per turn, one row per Step execution (its
 * wait and execute phases are bars on the same row) on a shared time axis, so
 * Steps that ran at the same time (parallel tool calls) stand side by side in
 * rows of their own, and a retried Step is marked. Pure, so it is tested
 * without a browser.
 *
 * @module
 */

import type { TimelineEntry } from "./api.js";

/** A bar: where it starts and how wide it is, in percent of its turn's span. */
export interface Bar {
  readonly entry: TimelineEntry;
  /** The row of the bar's Step execution in its turn, in order of first start. */
  readonly lane: number;
  readonly leftPercent: number;
  readonly widthPercent: number;
  readonly retried: boolean;
  readonly label: string;
}

/** A point in time with no duration: an RPC or the close. */
export interface Marker {
  readonly entry: TimelineEntry;
  readonly leftPercent: number;
  readonly label: string;
}

export interface TurnLayout {
  /** 1-based; 0 holds what came before the first turn. */
  readonly turn: number;
  readonly startSeconds: number;
  readonly spanSeconds: number;
  readonly lanes: number;
  /** The Step execution ID of each row. */
  readonly rows: readonly string[];
  readonly bars: readonly Bar[];
  readonly markers: readonly Marker[];
}

const BAR_KINDS = new Set(["wait", "execute", "running", "waiting"]);
/** A bar is drawn at least this wide, so a Step of a few milliseconds stays visible. */
export const MIN_WIDTH_PERCENT = 4;

export function formatSeconds(value: number): string {
  return value < 1 ? `${Math.round(value * 1000)} ms` : `${value.toFixed(1)} s`;
}

export function barLabel(entry: TimelineEntry): string {
  const parts = [entry.name, entry.kind];
  if (entry.duration_seconds !== null) parts.push(formatSeconds(entry.duration_seconds));
  if (entry.attempts > 1) parts.push(`attempt ${entry.attempts}`);
  if (entry.failed) parts.push("failed");
  return parts.join(" · ");
}

/** The end a bar reaches: its duration, or (active Steps) the end of the turn. */
function endOf(entry: TimelineEntry, turnEnd: number): number {
  if (entry.duration_seconds !== null) return entry.at_seconds + entry.duration_seconds;
  return Math.max(entry.at_seconds, turnEnd);
}

export function layoutTimeline(entries: readonly TimelineEntry[]): TurnLayout[] {
  const turns = new Map<number, TimelineEntry[]>();
  for (const entry of entries) {
    const list = turns.get(entry.turn) ?? [];
    list.push(entry);
    turns.set(entry.turn, list);
  }
  const layouts: TurnLayout[] = [];
  for (const [turn, list] of [...turns.entries()].sort((a, b) => a[0] - b[0])) {
    const start = Math.min(...list.map((e) => e.at_seconds));
    const timedEnd = Math.max(
      ...list.map((e) => (e.duration_seconds !== null ? e.at_seconds + e.duration_seconds : e.at_seconds)),
    );
    const end = Math.max(...list.map((e) => endOf(e, timedEnd)));
    const span = Math.max(end - start, 1e-3);
    const percent = (at: number): number => ((at - start) / span) * (100 - MIN_WIDTH_PERCENT);
    const rows: string[] = [];
    const bars: Bar[] = [];
    const markers: Marker[] = [];
    const ordered = [...list].sort((a, b) => a.at_seconds - b.at_seconds);
    for (const entry of ordered) {
      const left = percent(entry.at_seconds);
      if (!BAR_KINDS.has(entry.kind)) {
        markers.push({ entry, leftPercent: left, label: `${entry.kind} ${entry.name}` });
        continue;
      }
      const width = Math.max(percent(endOf(entry, timedEnd)) - left, MIN_WIDTH_PERCENT);
      let lane = rows.indexOf(entry.name);
      if (lane < 0) {
        lane = rows.length;
        rows.push(entry.name);
      }
      bars.push({
        entry,
        lane,
        leftPercent: left,
        widthPercent: width,
        retried: entry.attempts > 1,
        label: barLabel(entry),
      });
    }
    layouts.push({ turn, startSeconds: start, spanSeconds: span, lanes: rows.length, rows, bars, markers });
  }
  return layouts;
}
