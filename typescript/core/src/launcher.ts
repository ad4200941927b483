/**
 * `launchWorker`: starts the Python Worker that hosts the session Flows of
 * the served runners, so a TypeScript application runs one command. The
 * Worker runs in its own process group; the launcher waits for its `ready`,
 * starts it again when it exits, and kills the group on `stop`.
 *
 * @module
 */

import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export interface LaunchWorkerOptions {
  /** The Dex server's address. */
  readonly serverAddress: string;
  /** Where `serveRunners` listens (`RunnerServer.address`). */
  readonly runnerTarget: string;
  /** One session Flow per Flow type, each on a `RemoteRunner`. */
  readonly flowTypes: readonly string[];
  /** The Python interpreter with `dex-agents` installed. Default `python3`. */
  readonly python?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** How long a start may take before it fails. Default 60 s. */
  readonly readyTimeoutMs?: number;
  /** Called after each (re)start with the Worker's process ID. */
  readonly onReady?: (pid: number) => void;
}

export interface LaunchedWorker {
  /** The running Worker's process ID. */
  readonly pid: number | undefined;
  /** Kills the Worker's process group and stops restarting it. */
  stop(): Promise<void>;
}

/** The Worker did not print `ready`; the message carries its exit and stderr tail. */
export class WorkerStartError extends Error {
  override name = "WorkerStartError";
}

export async function launchWorker(options: LaunchWorkerOptions): Promise<LaunchedWorker> {
  let stopping = false;
  let child: ChildProcess | undefined;
  const start = (): Promise<ChildProcess> =>
    new Promise((resolve, reject) => {
      const args = ["-m", "dex_agents._remote.worker", "--server", options.serverAddress];
      args.push("--runner-target", options.runnerTarget);
      for (const flowType of options.flowTypes) args.push("--flow-type", flowType);
      const proc = spawn(options.python ?? "python3", args, {
        detached: true, // its own process group, killed as a whole
        env: options.env ?? process.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      proc.stderr?.on("data", (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4000);
        process.stderr.write(chunk);
      });
      const timer = setTimeout(() => {
        kill(proc);
        reject(new WorkerStartError(`the Python Worker printed no ready within ${options.readyTimeoutMs ?? 60_000} ms`));
      }, options.readyTimeoutMs ?? 60_000);
      const lines = createInterface({ input: proc.stdout! });
      lines.on("line", (line) => {
        if (line.startsWith("ready")) {
          clearTimeout(timer);
          resolve(proc);
        }
      });
      proc.on("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new WorkerStartError(`the Python Worker exited (${signal ?? code}) before ready: ${stderr}`));
      });
    });
  const supervise = (proc: ChildProcess): void => {
    child = proc;
    options.onReady?.(proc.pid ?? -1);
    proc.on("exit", () => {
      if (stopping) return;
      start().then(supervise, (error: unknown) => {
        process.stderr.write(`dex-agents: restarting the Python Worker failed: ${String(error)}\n`);
      });
    });
  };
  supervise(await start());
  return {
    get pid() {
      return child?.pid;
    },
    stop: async () => {
      stopping = true;
      const proc = child;
      if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
      kill(proc);
      await exited;
    },
  };
}

function kill(proc: ChildProcess): void {
  if (proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, "SIGKILL");
  } catch {
    // already gone
  }
}
