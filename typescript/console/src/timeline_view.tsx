/**
 * The Step timeline picture: per turn, a row per Step execution (named in the
 * left column) with its phases as positioned bars on the turn's time axis.
 *
 * @module
 */

import type { TimelineEntry } from "./api.js";
import { formatSeconds, layoutTimeline } from "./timeline.js";

const LANE_PX = 26;

function barClass(kind: string, failed: boolean, retried: boolean): string {
  return ["bar", `bar-${kind}`, failed ? "bar-failed" : "", retried ? "bar-retried" : ""].filter(Boolean).join(" ");
}

export function Timeline({ entries }: { readonly entries: readonly TimelineEntry[] }) {
  const turns = layoutTimeline(entries);
  if (turns.length === 0) return <p className="muted">No Step has committed yet.</p>;
  return (
    <div className="timeline" data-testid="timeline">
      {turns.map((turn) => (
        <section className="turn" key={turn.turn} data-turn={turn.turn}>
          <h4>
            {turn.turn === 0 ? "Session start" : `Turn ${turn.turn}`}
            <span className="muted"> · {turn.spanSeconds.toFixed(1)} s</span>
          </h4>
          <div className="turn-grid">
          <div className="row-labels">
            {turn.rows.map((row) => (
              <div key={row} className="row-label" style={{ height: `${LANE_PX}px` }}>
                {row}
              </div>
            ))}
          </div>
          <div className="lanes" style={{ height: `${Math.max(turn.lanes, 1) * LANE_PX}px` }}>
            {turn.bars.map((bar) => (
              <div
                key={`${bar.entry.name}-${bar.entry.kind}-${bar.entry.at_seconds}`}
                className={barClass(bar.entry.kind, bar.entry.failed, bar.retried)}
                data-step={bar.entry.name}
                data-step-type={bar.entry.step_type}
                data-kind={bar.entry.kind}
                data-lane={bar.lane}
                data-attempts={bar.entry.attempts}
                style={{
                  left: `${bar.leftPercent}%`,
                  width: `${bar.widthPercent}%`,
                  top: `${bar.lane * LANE_PX}px`,
                }}
                title={[bar.label, ...bar.entry.notes].join("\n")}
              >
                <span className="bar-text">
                  {bar.retried ? `↻ attempt ${bar.entry.attempts} · ` : ""}
                  {bar.entry.kind}
                  {bar.entry.duration_seconds !== null ? ` ${formatSeconds(bar.entry.duration_seconds)}` : ""}
                </span>
              </div>
            ))}
            {turn.markers.map((marker) => (
              <div
                key={`${marker.entry.kind}-${marker.entry.name}-${marker.entry.at_seconds}`}
                className={`marker marker-${marker.entry.kind}`}
                data-marker={marker.entry.name}
                style={{ left: `${marker.leftPercent}%` }}
                title={[marker.label, ...marker.entry.notes].join("\n")}
              />
            ))}
          </div>
          </div>
          <div className="axis">
            <span>+0 s</span>
            <span>+{formatSeconds(turn.spanSeconds)}</span>
          </div>
          <ul className="notes">
            {turn.bars
              .filter((bar) => bar.entry.notes.length > 0)
              .map((bar) => (
                <li key={`${bar.entry.name}-${bar.entry.kind}`} className={bar.retried ? "retry-note" : ""}>
                  <code>{bar.entry.name}</code> {bar.entry.notes.join("; ")}
                </li>
              ))}
          </ul>
        </section>
      ))}
      <p className="legend">
        <span className="swatch bar-execute" /> execute <span className="swatch bar-wait" /> wait{" "}
        <span className="swatch bar-running" /> running <span className="swatch bar-retried" /> retried{" "}
        <span className="swatch bar-failed" /> failed
      </p>
    </div>
  );
}
