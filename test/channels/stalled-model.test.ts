/**
 * A model that stalls must not stall the gateway. With the default config, ten conversations
 * whose model streams hang do not delay an eleventh, and each stalled user gets a notice once the
 * idle limit passes. A run whose stream stalls gives its run slot up after
 * `gateway.stall_release_ms`, so more stalled streams than slots hold up no one, and a stalled run
 * that moves again finishes without waiting for a slot.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MESSAGES } from "../../src/harness/run-errors.js";
import type { Harness, RunEvent } from "../../src/harness/types.js";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { lastUserText, startMockModel } from "../fakes/openai.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const texts = (world: LoopbackWorld, chatId: string) => world.botMessages(chatId).map((m) => m.text);

/** A gateway whose mock model stalls every message that starts with "stall" after two chunks and answers the rest. */
async function stallingGateway(idleMs: number, gateway: Record<string, unknown> = {}) {
  const model = await startMockModel();
  model.setDefault((req) =>
    lastUserText(req).startsWith("stall") ? { fault: "stall", afterChunks: 2 } : { text: `fresh: ${lastUserText(req)}` },
  );
  const world = new LoopbackWorld();
  gw = await startTestGateway({
    channels: { loop: world.channelConfig() },
    model,
    gateway,
    modelConfig: { stream_idle_timeout_ms: idleMs },
  });
  return { model, world };
}

describe("stalled model streams", () => {
  it("ten stalled conversations do not delay an eleventh; the stalled ones get a notice", async () => {
    // Default gateway settings; only the idle limit is short, so the test ends in seconds.
    const { model, world } = await stallingGateway(5_000);
    for (let i = 0; i < 10; i++) await world.userSays(`stall ${i}`, { chatId: `stuck${i}` });
    await eventually(() => model.requests.length >= 10, 5_000, "ten stalled model calls");
    await world.userSays("hello", { chatId: "free" });
    await eventually(() => world.botMessages("free").some((m) => m.text === "fresh: hello"), 5_000, "the eleventh answer");
    // Answered while every stall still hangs: it waited for none of them (the speed is the model-stall probe's).
    const noticed = (i: number) => world.botMessages(`stuck${i}`).some((m) => m.text.includes(MESSAGES.stalled));
    expect([...Array(10).keys()].filter(noticed)).toEqual([]);
    for (let i = 0; i < 10; i++) {
      await eventually(
        () => world.botMessages(`stuck${i}`).some((m) => m.text.includes(MESSAGES.stalled)),
        10_000,
        `the stall notice in conversation ${i}`,
      );
    }
  });
});

describe("run slots", () => {
  it("five stalled model streams with three run slots: all five run, another conversation is answered, every slot comes back", async () => {
    // The stalls last far longer than the test: only giving up their slots lets anything else run.
    const { model, world } = await stallingGateway(120_000, { max_concurrent_runs: 3 });
    for (let i = 0; i < 5; i++) await world.userSays(`stall ${i}`, { chatId: `stuck${i}` });
    // None of them ends, so five open model calls means five runs at once with three slots.
    await eventually(() => model.requests.length === 5, 15_000, "five stalled model calls at once");
    const sent = Date.now();
    await world.userSays("hello", { chatId: "free" });
    await eventually(() => texts(world, "free").includes("fresh: hello"), 15_000, "the answer beside five stalls");
    const waited = Date.now() - sent;
    expect(waited, "answered long before any stall ends").toBeLessThan(15_000);
    // Once silent past the threshold, the stalled runs hold no slot.
    await eventually(() => gw!.gateway.messageDispatcher!.activeRuns === 0, 10_000, "no slot held by a stalled run");
    for (let i = 0; i < 5; i++) await world.userSays("/stop", { chatId: `stuck${i}` });
    for (let i = 0; i < 5; i++) {
      await eventually(
        () => texts(world, `stuck${i}`).some((t) => t.includes(MESSAGES.cancelled)),
        15_000,
        `the stop notice in conversation ${i}`,
      );
    }
    await eventually(() => gw!.gateway.messageDispatcher!.activeRuns === 0, 5_000, "every slot back");
  });

  it("a stalled run that moves again finishes without waiting for a slot, and streaming runs keep the cap", async () => {
    let gate!: () => void;
    const resumed = new Promise<void>((resolve) => {
      gate = resolve;
    });
    let streaming = 0;
    let most = 0;
    const harness: Harness = {
      run(_threadId, text) {
        return (async function* (): AsyncGenerator<RunEvent> {
          if (text.startsWith("stall")) {
            yield { type: "text", delta: "thinking… " };
            await resumed;
            yield { type: "done", text: `thinking… done ${text}` };
            return;
          }
          // Counted from its start to its last event: the slot is free once the run says it is done.
          streaming++;
          most = Math.max(most, streaming);
          for (let i = 0; i < 150; i++) {
            yield { type: "text", delta: "." };
            await new Promise((r) => setTimeout(r, 20));
          }
          streaming--;
          yield { type: "done", text: `${".".repeat(150)} steady ${text}` };
        })();
      },
      resume: () => (async function* (): AsyncGenerator<RunEvent> {})(),
      cancel: () => false,
      getThread: async () => undefined,
      close: async () => undefined,
    };
    const world = new LoopbackWorld();
    gw = await startTestGateway({
      channels: { loop: world.channelConfig() },
      harness,
      gateway: { max_concurrent_runs: 2 },
    });
    await world.userSays("stall a", { chatId: "s1" });
    await world.userSays("stall b", { chatId: "s2" });
    await eventually(() => texts(world, "s1").length > 0 && texts(world, "s2").length > 0, 10_000, "both stalls showing text");
    for (let i = 0; i < 4; i++) await world.userSays(`go ${i}`, { chatId: `g${i}` });
    await eventually(() => streaming === 2, 10_000, "two streaming runs in the slots the stalls gave up");
    // The stalls move again while both slots are taken: they finish anyway, beside the streaming runs.
    gate();
    await eventually(
      () => texts(world, "s1").includes("thinking… done stall a") && texts(world, "s2").includes("thinking… done stall b"),
      10_000,
      "the resumed stalls finished",
    );
    // Finished while the first two streaming runs (3 s each) still hold both slots: they did not wait for one.
    expect(streaming).toBe(2);
    expect([0, 1, 2, 3].filter((i) => texts(world, `g${i}`).some((t) => t.includes("steady")))).toEqual([]);
    await eventually(
      () => [0, 1, 2, 3].every((i) => texts(world, `g${i}`).some((t) => t.endsWith(`steady go ${i}`))),
      20_000,
      "every streaming run answered",
    );
    expect(most, "never more streaming runs than slots").toBe(2);
    await eventually(() => gw!.gateway.messageDispatcher!.activeRuns === 0, 5_000, "every slot back");
  });
});
