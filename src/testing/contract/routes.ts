/**
 * The contract's routes part: a channel takes its webhook at `/webhooks/<name>`; when another
 * channel holds that path, its start fails with an error naming both, and it starts once the path is free.
 */
import { describe, expect, it } from "vitest";
import { eventually } from "../gateway.js";
import { type ContractContext, channelUnderTest, withText } from "./shared.js";

export function routesContract(current: () => ContractContext): void {
  describe("routes", () => {
    it("refuses to start on a webhook path another channel holds, naming both", async ({ skip }) => {
      const ctx = current();
      const { driver, gateway, model } = ctx;
      if (!driver.webhook) return skip(`${driver.channelName} takes no webhook in this mode`);
      const { channel, sink } = channelUnderTest(ctx);
      const path = `/webhooks/${driver.channelName}`;
      await channel.stop();
      gateway.server.mount("intruder").route("POST", path, (_req, res) => void res.end());
      const err = (await channel.start(sink).catch((e: unknown) => e)) as Error;
      expect(err?.message).toContain(`already mounted by channel "intruder"`);
      expect(err?.message).toContain(`channel "${driver.channelName}" cannot mount it`);
      expect(channel.status().state).toBe("failed");
      gateway.server.unroute(path, "intruder");
      await channel.start(sink);
      expect(channel.status().state).toBe("running");
      model.enqueue({ text: "The path is mine again." });
      await driver.userSays("hello after the collision");
      await eventually(withText(driver, "The path is mine again."), 15_000, "the reply on the freed path");
    });
  });
}
