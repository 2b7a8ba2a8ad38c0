/**
 * The contract's lifecycle part: a stop during start ends that start (code `stopped`) and leaves
 * the channel stopped; a double stop is harmless; a start after it connects again, and a second
 * start while running adds nothing (the user still gets one reply).
 */
import { describe, expect, it } from "vitest";
import { eventually, sleep } from "../gateway.js";
import { type ContractContext, channelUnderTest, timesHeard, withText } from "./shared.js";

export function lifecycleContract(current: () => ContractContext): void {
  describe("lifecycle", () => {
    it("stop during start, a double stop, then start again: one channel, one reply", async () => {
      const ctx = current();
      const { driver, model } = ctx;
      const { channel, sink } = channelUnderTest(ctx);
      await channel.stop();
      const starting = channel.start(sink).catch((err: unknown) => err);
      await channel.stop();
      expect(await starting).toMatchObject({ code: "stopped" });
      expect(channel.status()).toMatchObject({ state: "stopped", connected: false });
      await channel.stop();
      expect(channel.status().state).toBe("stopped");
      // Whatever the aborted start made late has been released by now.
      await sleep(300);
      await channel.start(sink);
      await channel.start(sink);
      expect(channel.status()).toMatchObject({ state: "running", connected: true });
      model.enqueue({ text: "Back after a restart." });
      await driver.userSays("are you there?");
      await eventually(withText(driver, "Back after a restart."), 15_000, "the reply after the restart");
      await sleep(400);
      expect(timesHeard(model, "are you there?")).toBe(1);
      expect(driver.botMessages().filter((m) => m.text === "Back after a restart.")).toHaveLength(1);
    });
  });
}
