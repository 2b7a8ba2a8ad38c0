/**
 * A channel that fails at run time: the supervisor keeps restarting it with backoff, the log
 * shows the failure's stack once, and each retry after that is one line naming the error.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startTestGateway } from "../../src/testing/gateway.js";
import { eventually } from "../../src/testing/wait.js";
import { memoryLogger } from "../harness/helpers.js";
import { FailingChannel } from "./fixtures/failing-channel.js";

describe("a channel that keeps failing to start", () => {
  it("logs its stack once, then one line per retry", { timeout: 30_000 }, async () => {
    const { logger, logs } = memoryLogger();
    const use = `${path.join(import.meta.dirname, "fixtures/failing-channel.ts")}:FailingChannel`;
    const gw = await startTestGateway({
      logger,
      channels: { flaky: { enabled: true, use } },
      supervisor: { baseDelayMs: 20, maxDelayMs: 40, pollMs: 10 },
      startWaitMs: 1_000,
    });
    try {
      await eventually(() => FailingChannel.starts >= 4, 10_000, "four start attempts");
      const stacks = logs.filter((l) => l.channel === "flaky" && typeof (l.err as { stack?: string })?.stack === "string");
      expect(stacks).toHaveLength(1);
      const retries = logs.filter((l) => l.msg === "channel failed; restarting after a delay");
      expect(retries.length).toBeGreaterThanOrEqual(3);
      for (const retry of retries) {
        expect(retry).toMatchObject({ channel: "flaky", error: "the platform refused the token" });
        expect(retry.err).toBeUndefined();
      }
    } finally {
      await gw.stop();
    }
  });
});
