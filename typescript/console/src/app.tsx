/**
 * The console page: the session list on the left, the chosen session's chat and
 * Step timeline on the right. The chosen session is the URL's `#session=<id>`,
 * so a link opens it directly.
 *
 * @module
 */

import { convertAgentSnapshotToUIMessages, type DexUIMessage, fetchUiSnapshot } from "@dex-agents/ui";
import { useCallback, useEffect, useState } from "react";

import { type ConsoleApi, describeFailure, type SessionSummary, type SessionTimeline } from "./api.js";
import { Chat } from "./chat.js";
import { Timeline } from "./timeline_view.js";

/** How often the list and the timeline are read again while the page is open. */
const REFRESH_MS = 1500;

function sessionFromHash(): string | null {
  const found = /^#session=(.+)$/.exec(window.location.hash);
  return found?.[1] ? decodeURIComponent(found[1]) : null;
}

function SessionList({
  api,
  selected,
  onSelect,
}: {
  readonly api: ConsoleApi;
  readonly selected: string | null;
  readonly onSelect: (id: string) => void;
}) {
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const [flag, setFlag] = useState(0);

  useEffect(() => {
    let live = true;
    const read = () =>
      api.listSessions().then(
        (found) => {
          if (!live) return;
          setSessions(found);
          setProblem(null);
        },
        (failure: unknown) => live && setProblem(describeFailure(failure, api.base)),
      );
    void read();
    const timer = window.setInterval(read, REFRESH_MS * 2);
    return () => {
      live = false;
      window.clearInterval(timer);
    };
  }, [api, flag]);

  const start = () => {
    api.startSession().then(
      (id) => {
        setFlag((n) => n + 1);
        onSelect(id);
      },
      (failure: unknown) => setProblem(describeFailure(failure, api.base)),
    );
  };

  return (
    <nav className="sessions" data-testid="sessions">
      <h2>Sessions</h2>
      <button type="button" className="new-session" onClick={start}>
        New session
      </button>
      {problem ? (
        <p className="problem" role="alert">
          {problem}
        </p>
      ) : null}
      <ul>
        {sessions.map((s) => (
          <li key={s.session_id} className={s.session_id === selected ? "selected" : ""}>
            <a href={`#session=${encodeURIComponent(s.session_id)}`} data-session={s.session_id}>
              {s.session_id}
            </a>{" "}
            <span className={`status status-${s.status}`}>{s.status}</span>
          </li>
        ))}
      </ul>
      {sessions.length === 0 && !problem ? <p className="muted">No sessions yet.</p> : null}
    </nav>
  );
}

type Loaded =
  | { readonly state: "loading" }
  | { readonly state: "failed"; readonly message: string }
  | {
      readonly state: "ready";
      readonly timeline: SessionTimeline;
      readonly messages: DexUIMessage[] | null;
      /** Why a running session has no chat: its snapshot failed (e.g. no Worker answered). */
      readonly snapshotProblem: string | null;
    };

function SessionView({ api, sessionId }: { readonly api: ConsoleApi; readonly sessionId: string }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: "loading" });
  const [timeline, setTimeline] = useState<SessionTimeline | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    (async () => {
      const found = await api.timeline(sessionId);
      let messages: DexUIMessage[] | null = null;
      let snapshotProblem: string | null = null;
      if (found.running) {
        try {
          messages = convertAgentSnapshotToUIMessages((await fetchUiSnapshot(api.base, sessionId)).snapshot);
        } catch (failure) {
          snapshotProblem = describeFailure(failure, api.base);
        }
      }
      if (live) {
        setTimeline(found);
        setLoaded({ state: "ready", timeline: found, messages, snapshotProblem });
      }
    })().catch((failure: unknown) => live && setLoaded({ state: "failed", message: describeFailure(failure, api.base) }));
    return () => {
      live = false;
    };
  }, [api, sessionId]);

  const refresh = useCallback(() => {
    api.timeline(sessionId).then(
      (found) => {
        setTimeline(found);
        setProblem(null);
      },
      (failure: unknown) => setProblem(describeFailure(failure, api.base)),
    );
  }, [api, sessionId]);

  useEffect(() => {
    if (loaded.state !== "ready") return undefined;
    const timer = window.setInterval(refresh, REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [loaded.state, refresh]);

  if (loaded.state === "loading") return <p className="muted">Opening {sessionId}…</p>;
  if (loaded.state === "failed") {
    return (
      <p className="problem" role="alert" data-testid="session-problem">
        {loaded.message}
      </p>
    );
  }
  const current = timeline ?? loaded.timeline;
  const closed = !current.running;
  return (
    <div className="session" data-session-id={sessionId} data-status={current.status}>
      <h2>
        {sessionId} <span className={`status status-${current.status}`}>{current.status}</span>
      </h2>
      {problem ? (
        <p className="problem" role="alert" data-testid="connection-problem">
          {problem}
        </p>
      ) : null}
      {closed ? (
        <p className="notice" data-testid="session-closed">
          Session {sessionId} has closed ({current.status}); it takes no more messages. Its Step timeline is below.
        </p>
      ) : null}
      {!closed && loaded.snapshotProblem ? (
        <p className="problem" role="alert" data-testid="session-problem">
          The session's messages could not be read: {loaded.snapshotProblem}
        </p>
      ) : null}
      {!closed && loaded.messages ? (
        <Chat api={api} sessionId={sessionId} initialMessages={loaded.messages} onActivity={refresh} />
      ) : null}
      <h3>Step timeline</h3>
      <Timeline entries={current.entries} />
    </div>
  );
}

export function App({ api }: { readonly api: ConsoleApi }) {
  const [selected, setSelected] = useState<string | null>(sessionFromHash);
  useEffect(() => {
    const changed = () => setSelected(sessionFromHash());
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  const select = (id: string) => {
    window.location.hash = `session=${encodeURIComponent(id)}`;
  };
  return (
    <div className="console">
      <header>
        <h1>dex-agents console</h1>
      </header>
      <SessionList api={api} selected={selected} onSelect={select} />
      <main>
        {selected ? (
          <SessionView key={selected} api={api} sessionId={selected} />
        ) : (
          <p className="muted">Choose a session, or start a new one.</p>
        )}
      </main>
    </div>
  );
}
