/**
 * The contract's follow-ups part: messages sent while the agent still answers. Each test picks
 * its mode the way a user does, with `/queue <mode>` in the chat, then talks over a run that
 * calls a slow tool (`run_steps`, tools.ts) or streams a long reply:
 * - collect: five messages 200 ms apart become exactly one next turn, listing all five in order;
 * - steer: a message sent while the tool runs reaches the model in the same run's next call, and
 *   the run ends with one reply;
 * - interrupt: the reply stops soon, its partial stays in the chat, marked, and the new message
 *   is answered once by a run that sees the partial;
 * - `/stop` in steer mode stops the run, and a message sent after it gets a reply of its own.
 */
import { describe, expect, it } from "vitest";
import type { ContractDriver } from "../driver.js";
import { eventually, sleep } from "../gateway.js";
import { type ChatCompletionRequest, contentText, lastUserText, type MockModel } from "../mock-model.js";
import { PROGRESS_TOOL } from "../tools.js";
import type { ContractContext } from "./shared.js";

/** The slow tool call the first turn makes: about 2.4 s of work in 8 steps. */
const SLOW = { toolCalls: [{ name: PROGRESS_TOOL, args: { steps: 8, delay_ms: 300 } }] };

/** The text of each user message of a request, in order. */
function userTexts(req: ChatCompletionRequest): string[] {
  return req.messages.filter((m) => m.role === "user").map((m) => contentText(m.content));
}

/** The requests whose newest message is a user message containing `text`: the turns that answer it. */
function turnsFor(model: MockModel, text: string): ChatCompletionRequest[] {
  return model.requests.filter(
    (r) => r.messages.at(-1)?.role === "user" && contentText(r.messages.at(-1)?.content).includes(text),
  );
}

/** Picks the follow-up mode with `/queue`, as a user does, and waits for the confirmation. */
async function pickMode(driver: ContractDriver, mode: string): Promise<void> {
  await driver.userSays(`/queue ${mode}`);
  await eventually(
    () => driver.botMessages().find((m) => m.text.includes(`Follow-up mode: ${mode}`)),
    15_000,
    `the /queue ${mode} confirmation`,
  );
}

/** Sends `text` and waits until the model was asked about it (its run started). */
async function startRun(driver: ContractDriver, model: MockModel, text: string): Promise<void> {
  const before = model.requests.length;
  await driver.userSays(text);
  await eventually(() => model.requests.length > before, 15_000, "the run's first model call");
}

export function followupsContract(current: () => ContractContext): void {
  describe("follow-ups", () => {
    it("collect: five messages sent during a run become one next turn with all five, in order", () => collect(current()));
    it("steer: a message sent while a tool runs reaches the same run's next model call, and one reply ends it", () =>
      steer(current()));
    it("interrupt: a new message stops the reply, keeps its partial, and is answered once by a run that sees it", () =>
      interrupt(current()));
    it("/stop ends a run in steer mode, and a message sent after it gets its own reply", () => stopThenMessage(current()));
  });
}

async function collect({ driver, model }: ContractContext): Promise<void> {
  await pickMode(driver, "collect");
  model.enqueue(SLOW);
  await startRun(driver, model, "start the long job");
  const sent = ["c1 also check staging", "c2 and prod", "c3 skip the cache", "c4 use the new key", "c5 thanks"];
  for (const text of sent) {
    await driver.userSays(text);
    await sleep(200);
  }
  const turn = await eventually(() => turnsFor(model, "c1 also")[0], 20_000, "the collected turn");
  const last = contentText(turn.messages.at(-1)?.content);
  const at = sent.map((s) => last.indexOf(s));
  expect(
    at.every((i) => i >= 0),
    last,
  ).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
  await eventually(() => driver.botMessages().find((m) => m.text.includes("c5 thanks")), 15_000, "the collected reply");
  // No message was a turn of its own, and the collected one ran once.
  await sleep(500);
  for (const s of sent) expect(turnsFor(model, s), s).toHaveLength(1);
}

async function steer({ driver, model }: ContractContext): Promise<void> {
  await pickMode(driver, "steer");
  // A model takes a moment to start answering. A LangGraph server's run must be interrupted in
  // that moment for the message to join it; a run that already answered has it answered next.
  model.setDefault((req) => ({ text: `ok: ${lastUserText(req)}`, firstByteMs: 600 }));
  model.enqueue(SLOW);
  await startRun(driver, model, "run the tests");
  const runRequests = model.requests.length;
  await sleep(300);
  await driver.userSays("also check staging");
  const steered = () => model.requests.findIndex((r, i) => i >= runRequests && userTexts(r).includes("also check staging"));
  const at = await eventually(() => (steered() >= 0 ? steered() : undefined), 20_000, "the steered message at the model");
  // The run's next call. A LangGraph server starts that call as soon as the tool ends; the
  // harness cuts it and makes it again with the message (src/harness/README.md), so one cut
  // call may come first there. Nothing of the cut call reaches the chat (one reply, below).
  expect(at - runRequests, "model calls before the one with the steered message").toBeLessThanOrEqual(1);
  const next = model.requests[at]!;
  const users = userTexts(next);
  expect(users.slice(-2)).toEqual(["run the tests", "also check staging"]);
  // The steered message comes after the tool's result: the tool ran to its end.
  const roles = next.messages.map((m) => m.role);
  expect(roles.lastIndexOf("user")).toBeGreaterThan(roles.lastIndexOf("tool"));
  const reply = await eventually(
    () => driver.botMessages().find((m) => m.text.includes("ok: also check staging")),
    15_000,
    "the run's one reply",
  );
  expect(reply).toBeDefined();
  await sleep(500);
  expect(turnsFor(model, "also check staging")).toHaveLength(1);
  expect(driver.botMessages().filter((m) => m.text.includes("ok: "))).toHaveLength(1);
}

async function interrupt({ driver, model }: ContractContext): Promise<void> {
  await pickMode(driver, "interrupt");
  const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
  model.enqueue({ text: long, chunkSize: 6, delayMs: 60 });
  await startRun(driver, model, "write a long story");
  // Where replies stream, the user sees part of it first; elsewhere it is still being written.
  if (driver.streams) {
    await eventually(
      () => driver.botMessages().find((m) => m.text.startsWith("word0") && m.text.length > 20),
      15_000,
      "part of the reply in the chat",
    );
  } else await sleep(800);
  await driver.userSays("no wait, the other file");
  await eventually(() => driver.botMessages().some((m) => /Interrupted by your new message/.test(m.text)), 5_000, "the mark");
  const answer = await eventually(() => turnsFor(model, "no wait, the other file")[0], 15_000, "the new message's run");
  // The new run sees the partial as the assistant's, cut off.
  const assistant = answer.messages.filter((m) => m.role === "assistant").map((m) => contentText(m.content));
  expect(
    assistant.some((t) => t.startsWith("word0") && t.includes("cut off")),
    JSON.stringify(assistant),
  ).toBe(true);
  await eventually(
    () => driver.botMessages().find((m) => m.text === "ok: no wait, the other file"),
    15_000,
    "the answer to the new message",
  );
  const kept = driver.botMessages().find((m) => m.text.startsWith("word0"));
  expect(kept, "the partial stays in the chat").toBeDefined();
  expect(kept?.text).not.toContain("word59");
  await sleep(500);
  expect(turnsFor(model, "no wait, the other file")).toHaveLength(1);
}

async function stopThenMessage({ driver, model }: ContractContext): Promise<void> {
  await pickMode(driver, "steer");
  model.enqueue(SLOW);
  await startRun(driver, model, "start the long job");
  await driver.userSays("/stop");
  await driver.userSays("after the stop");
  await eventually(() => driver.botMessages().some((m) => /Stopped/.test(m.text)), 15_000, "the stopped notice");
  await eventually(
    () => driver.botMessages().find((m) => m.text === "ok: after the stop"),
    15_000,
    "the reply to the message after /stop",
  );
  expect(turnsFor(model, "after the stop")).toHaveLength(1);
}
