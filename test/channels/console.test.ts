/**
 * The console channel on its own: lines in, messages out, and a sink failure that must not stop
 * later lines or the end of input from getting through.
 */
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleChannel } from "../../src/channels/console/index.js";
import type { InboundMessage } from "../../src/channels/types.js";
import { silentLogger } from "../../src/log/logger.js";
import { eventually } from "../contract/gateway.js";

afterEach(() => {
  ConsoleChannel.io = undefined;
});

function makeConsole() {
  const input = new PassThrough();
  const output = new PassThrough();
  ConsoleChannel.io = { input, output };
  const channel = new ConsoleChannel({
    name: "console",
    config: { prefix: "bot› " },
    logger: silentLogger(),
    http: { route() {}, unroute() {} },
    baseDir: ".",
  });
  let shown = "";
  output.on("data", (chunk: Buffer) => {
    shown += chunk.toString("utf8");
  });
  return { channel, input, shown: () => shown };
}

describe("console channel", () => {
  it("keeps reading lines after the core refused one, and still reports the end of input", async () => {
    const { channel, input, shown } = makeConsole();
    const got: InboundMessage[] = [];
    const rejections: unknown[] = [];
    const onRejection = (err: unknown) => rejections.push(err);
    process.on("unhandledRejection", onRejection);
    try {
      await channel.start(async (msg) => {
        if (msg.text === "refused") throw new Error("the gateway is shutting down");
        got.push(msg);
      });
      input.write("refused\nsecond line\n");
      await eventually(() => got.length === 1, 2_000, "the second line");
      expect(got.map((m) => m.text)).toEqual(["second line"]);
      expect(shown(), "the refused line is reported on the terminal").toContain(
        "bot› (not sent: the gateway is shutting down)\n",
      );
      input.end();
      await channel.closed;
      await new Promise((r) => setImmediate(r));
      expect(rejections).toEqual([]);
    } finally {
      process.off("unhandledRejection", onRejection);
      await channel.stop();
    }
  });
});
