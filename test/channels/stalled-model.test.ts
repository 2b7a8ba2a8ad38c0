/**
 * A model that stalls must not stall the gateway: with the default config, ten conversations
 * whose model streams hang do not delay an eleventh, and each stalled user gets a notice once
 * the idle limit passes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MESSAGES } from "../../src/harness/run-errors.js";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { LoopbackWorld } from "../fakes/loopback.js";
import { lastUserText, startMockModel } from "../fakes/openai.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe("stalled model streams", () => {
  it("ten stalled conversations do not delay an eleventh; the stalled ones get a notice", async () => {
    const model = await startMockModel();
    model.setDefault((req) =>
      lastUserText(req).startsWith("stall") ? { fault: "stall", afterChunks: 2 } : { text: `fresh: ${lastUserText(req)}` },
    );
    const world = new LoopbackWorld();
    gw = await startTestGateway({
      channels: { loop: world.channelConfig() },
      model,
      // Default gateway settings; only the idle limit is short, so the test ends in seconds.
      modelConfig: { stream_idle_timeout_ms: 2500 },
    });
    for (let i = 0; i < 10; i++) await world.userSays(`stall ${i}`, { chatId: `stuck${i}` });
    await eventually(() => model.requests.length >= 10, 5_000, "ten stalled model calls");
    const sent = Date.now();
    await world.userSays("hello", { chatId: "free" });
    await eventually(() => world.botMessages("free").some((m) => m.text === "fresh: hello"), 5_000, "the eleventh answer");
    expect(Date.now() - sent).toBeLessThan(2000);
    for (let i = 0; i < 10; i++) {
      await eventually(
        () => world.botMessages(`stuck${i}`).some((m) => m.text.includes(MESSAGES.stalled)),
        10_000,
        `the stall notice in conversation ${i}`,
      );
    }
  });
});
