/**
 * Drives the built console in Debian's headless Chromium through playwright-core
 * (no browser download), for python/core/tests/test_console_browser.py, which
 * starts dexlite, a Worker process of the demo agent and the app on uvicorn.
 *
 * `node dist/browser/console.browser.js MODE BASE_URL OUT_DIR [SESSION]`, MODE:
 * - `chat`: a new session, "refund order A-1001", approve the refund, then the
 *   answer and the Step timeline (parallel tool Steps in lanes of their own);
 * - `decline`: a new session, a refund whose approval is rejected with a reason,
 *   then a question (`ask`) answered with a choice button;
 * - `unknown` / `closed` / `noworker`: the page names the unknown or closed
 *   SESSION, or that no Worker answered for it (with its timeline);
 * - `dropped`: opens SESSION, prints `opened`, waits for a line on stdin (the
 *   test stops the server meanwhile), then the page says the server is lost;
 * - `retried`: sends `kill:g1` on SESSION (python/core/tests/http_flows.py: the
 *   model streams, then waits while the test SIGKILLs the Worker), prints
 *   `streamed` once the page shows the streamed text, waits for a line on stdin
 *   (the test has killed the Worker; the retry waits at its gate), prints
 *   `in-flight` once the timeline shows the Step running after the kill, then
 *   waits for the answer of the retried model call and its Step marked retried.
 * Each mode writes `<MODE>.png` to OUT_DIR and prints one JSON line of what it saw.
 *
 * @module
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

import { type BrowserContext, chromium, type Page } from "playwright-core";

const CHROMIUM = process.env["DEX_CHROMIUM"] ?? "/usr/bin/chromium";
/** Flags without which Chromium stalls on a closed network (see /work/shared/docs/ui-stream.md). */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const WAIT_MS = 60_000;

interface Seen {
  mode: string;
  session?: string;
  texts: string[];
  bars?: { step: string; stepType: string; kind: string; lane: number; left: number; attempts: number }[];
  problem?: string;
  notes?: string[];
  /** `retried`: what the page showed after the kill, while the retry was held. */
  inFlight?: { texts: string[]; notes: string[] };
  pageErrors: string[];
}

async function open(): Promise<{ context: BrowserContext; page: Page; cleanup: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "dex-console-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(WAIT_MS);
  return {
    context,
    page,
    cleanup: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

async function problemText(page: Page, testId: string): Promise<string> {
  const problem = page.getByTestId(testId);
  await problem.waitFor();
  return (await problem.innerText()).trim();
}

/** No stack trace, no "undefined", no raw exception name reaches the page. */
async function assertNoTrace(page: Page): Promise<void> {
  const body = await page.locator("body").innerText();
  for (const marker of ["Traceback", "    at ", "undefined", "[object Object]", "TypeError"]) {
    assert.ok(!body.includes(marker), `the page shows ${JSON.stringify(marker)}:\n${body}`);
  }
}

async function chat(page: Page, base: string, seen: Seen): Promise<void> {
  await newSession(page, base, seen);
  await page.getByLabel("message").fill("Please refund order A-1001");
  await page.getByRole("button", { name: "Send" }).click();
  const approve = page.getByRole("button", { name: "Approve" });
  await approve.waitFor();
  await page.locator('[data-tool="issue_refund"][data-state="approval-requested"]').waitFor();
  await approve.click();
  const answer = page.locator(".message.assistant .text", { hasText: "I refunded the full amount" });
  await answer.waitFor();
  await page.locator('[data-tool="issue_refund"][data-state="output-available"]').waitFor();
  await page.locator('[data-tool="get_order"][data-state="output-available"]').waitFor();
  // The timeline refreshes on its own; wait until the second model call has committed.
  await page.locator('.bar[data-step="RunModel-2"][data-kind="execute"]').waitFor();
  seen.texts = await page.locator(".message").allInnerTexts();
  seen.bars = await turnBars(page);
  await assertNoTrace(page);
}

/** The first turn's bars as the page lays them out. */
async function turnBars(page: Page): Promise<NonNullable<Seen["bars"]>> {
  return page.locator(".turn[data-turn='1'] .bar").evaluateAll((nodes) =>
    nodes.map((node) => {
      const el = node as HTMLElement;
      return {
        step: el.dataset["step"] ?? "",
        stepType: el.dataset["stepType"] ?? "",
        kind: el.dataset["kind"] ?? "",
        lane: Number(el.dataset["lane"]),
        left: el.getBoundingClientRect().left,
        attempts: Number(el.dataset["attempts"]),
      };
    }),
  );
}

async function retried(page: Page, base: string, session: string, seen: Seen): Promise<void> {
  seen.session = session;
  await page.goto(`${base}/console/#session=${encodeURIComponent(session)}`);
  await page.getByLabel("message").fill("kill:g1");
  await page.getByRole("button", { name: "Send" }).click();
  const assistant = page.locator(".message.assistant .text");
  await assistant.filter({ hasText: "partial answer" }).waitFor();
  console.log("streamed");
  await nextLine();
  // Attempt 1 died with the Worker; attempt 2 waits at its gate, so the Step is
  // still running, and the timeline says what became of attempt 1.
  const running = page.locator('.bar[data-step="RunModel-1"][data-kind="running"]');
  const killed = page.locator(".notes li", { hasText: "RunModel-1 attempt 1 Worker killed or lost" });
  await running.waitFor();
  await killed.waitFor();
  seen.inFlight = {
    texts: await page.locator(".message").allInnerTexts(),
    notes: await page.locator(".notes li").allInnerTexts(),
  };
  console.log("in-flight");
  await assistant.filter({ hasText: "final answer" }).waitFor();
  await page.locator('.bar.bar-retried[data-step="RunModel-1"][data-kind="execute"]').waitFor();
  seen.texts = await page.locator(".message").allInnerTexts();
  seen.bars = await turnBars(page);
  seen.notes = await page.locator(".notes li.retry-note").allInnerTexts();
  await assertNoTrace(page);
}

async function nextLine(): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.once("line", () => resolve()));
  lines.close();
}

async function newSession(page: Page, base: string, seen: Seen): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByRole("button", { name: "New session" }).click();
  await page.waitForURL(/#session=/);
  const session = decodeURIComponent(new URL(page.url()).hash.replace("#session=", ""));
  seen.session = session;
  await page.locator(`[data-session="${session}"]`).waitFor();
}

async function decline(page: Page, base: string, seen: Seen): Promise<void> {
  await newSession(page, base, seen);
  await page.getByLabel("message").fill("Please refund order A-2002");
  await page.getByRole("button", { name: "Send" }).click();
  await page.getByRole("button", { name: "Reject" }).waitFor();
  await page.getByLabel("rejection reason").fill("not this one");
  await page.getByRole("button", { name: "Reject" }).click();
  await page.locator('[data-tool="issue_refund"][data-state="output-denied"]').waitFor();
  await page.locator(".message.assistant .text", { hasText: "the refund was not made" }).waitFor();
  await page.getByLabel("message").fill("ask me something");
  await page.getByRole("button", { name: "Send" }).click();
  await page.getByRole("button", { name: "green" }).click();
  await page.locator(".question.answered", { hasText: "You answered: green" }).waitFor();
  await page.locator(".message.assistant .text", { hasText: "You answered: green" }).waitFor();
  seen.texts = await page.locator(".message").allInnerTexts();
  await assertNoTrace(page);
}

async function main(): Promise<void> {
  const [mode, base, out, session] = process.argv.slice(2);
  if (!mode || !base || !out) throw new Error("usage: console.browser.js MODE BASE_URL OUT_DIR [SESSION]");
  const { page, cleanup } = await open();
  const seen: Seen = { mode, texts: [], pageErrors: [] };
  page.on("pageerror", (error) => seen.pageErrors.push(error.message));
  try {
    if (mode === "chat") {
      await chat(page, base, seen);
    } else if (mode === "decline") {
      await decline(page, base, seen);
    } else if (mode === "unknown" || mode === "closed" || mode === "noworker") {
      assert.ok(session, `${mode} needs a SESSION`);
      seen.session = session;
      await page.goto(`${base}/console/#session=${encodeURIComponent(session)}`);
      seen.problem = await problemText(page, mode === "closed" ? "session-closed" : "session-problem");
      if (mode !== "unknown") await page.getByTestId("timeline").waitFor();
      assert.equal(await page.getByLabel("message").count(), 0, "a closed or unknown session offers a message box");
      await assertNoTrace(page);
    } else if (mode === "dropped") {
      assert.ok(session, "dropped needs a SESSION");
      seen.session = session;
      await page.goto(`${base}/console/#session=${encodeURIComponent(session)}`);
      await page.getByLabel("message").waitFor();
      console.log("opened");
      await nextLine();
      seen.problem = await problemText(page, "connection-problem");
      await page.getByLabel("message").fill("are you there?");
      await page.getByRole("button", { name: "Send" }).click();
      seen.texts = [await problemText(page, "chat-problem")];
      await assertNoTrace(page);
    } else if (mode === "retried") {
      assert.ok(session, "retried needs a SESSION");
      await retried(page, base, session, seen);
    } else {
      throw new Error(`unknown mode ${mode}`);
    }
  } finally {
    await page.screenshot({ path: join(out, `${mode}.png`), fullPage: true }).catch(() => undefined);
    await cleanup();
  }
  console.log(JSON.stringify(seen));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
