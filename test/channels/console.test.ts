/**
 * The console channel on its own: lines in, messages out, and a sink failure that must not stop
 * later lines or the end of input from getting through.
 */
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { markdownBlocks, terminalText } from "../../src/channels/console/format.js";
import { ConsoleChannel, PROMPT } from "../../src/channels/console/index.js";
import type { InboundMessage } from "../../src/channels/types.js";
import { silentLogger } from "../../src/log/logger.js";
import { eventually } from "../contract/gateway.js";

afterEach(() => {
  ConsoleChannel.io = undefined;
});

function makeConsole(options: { tty?: boolean; idle?: () => Promise<void> } = {}) {
  const input = new PassThrough();
  const output = Object.assign(new PassThrough(), { isTTY: options.tty });
  ConsoleChannel.io = { input, output, idle: options.idle };
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

describe("console output", () => {
  const ref = { channel: "console", key: "console:local:tty", chatId: "tty", chatType: "direct" as const };

  it("shows Markdown as plain text", async () => {
    const { channel, shown } = makeConsole();
    await channel.send(ref, { text: "# Title\n\nSome **bold** and `code`, a [link](https://x.test).\n\n1. one\n2. two" });
    await new Promise((r) => setImmediate(r));
    expect(shown()).toBe("bot› Title\n\nSome bold and code, a link (https://x.test).\n\n1. one\n2. two");
  });

  it("streams a reply block by block, never taking back what it printed, and ends it with a newline", async () => {
    const { channel, shown } = makeConsole();
    const stream = await channel.startStream();
    await stream.update("Some **bo");
    await stream.update("Some **bold** text.\n\n```\ncode\n\nmore");
    expect(shown(), "the code block shows up to its last whole line").toBe("bot› Some bold text.\n\ncode");
    await stream.finish("Some **bold** text.\n\n```\ncode\n\nmore\n```");
    await new Promise((r) => setImmediate(r));
    expect(shown()).toBe("bot› Some bold text.\n\ncode\n\nmore\n");
  });

  it("shows a paragraph as it is written, holding back only markup still open", async () => {
    const { channel, shown } = makeConsole();
    const stream = await channel.startStream();
    await stream.update("Once upon a **ti");
    await new Promise((r) => setImmediate(r));
    expect(shown()).toBe("bot› Once upon a");
    await stream.update("Once upon a **time** there was * one [link](https://x");
    await new Promise((r) => setImmediate(r));
    expect(shown()).toBe("bot› Once upon a time there was * one");
    await stream.finish("Once upon a **time** there was * one [link](https://x.test).");
    await new Promise((r) => setImmediate(r));
    expect(shown()).toBe("bot› Once upon a time there was * one link (https://x.test).\n");
  });

  it("on a terminal, shows the prompt again once the core is idle, on a line of its own", async () => {
    let release!: () => void;
    const idle = () => new Promise<void>((resolve) => (release = resolve));
    const { channel, input, shown } = makeConsole({ tty: true, idle });
    await channel.start(async () => {
      await channel.send(ref, { text: "the answer" });
    });
    expect(shown()).toBe(PROMPT);
    input.write("question\n");
    await eventually(() => shown().includes("the answer"), 2_000, "the answer");
    expect(shown().endsWith(PROMPT)).toBe(false);
    release();
    await eventually(() => shown().endsWith(`the answer\n${PROMPT}`), 2_000, "the prompt after the answer");
    await channel.stop();
  });

  it("splits blocks at blank lines outside code fences only", () => {
    expect(markdownBlocks("a\n\n```\nx\n\ny\n```\n\nb")).toEqual(["a", "```\nx\n\ny\n```", "b"]);
    expect(markdownBlocks("a\n\n")).toEqual(["a", ""]);
    expect(terminalText("- a\n- b")).toBe("• a\n• b");
  });
});
