/**
 * Notices are text, not Markdown: what Antler writes into one (a file name, a MIME type list, a
 * user's words) shows exactly as written. The refused-type notice of the real media desk goes
 * through `sendNotice` and each real adapter into its fake, and the fake's reader of the
 * platform's markup (what a person sees once the platform renders it) must show it unchanged.
 * The web chat is checked through a whole gateway, with a notice that repeats the user's input.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { literalMarkdown, plainEmitter, renderMarkdown } from "../../src/channels/markdown/index.js";
import type { Channel, InboundMessage } from "../../src/channels/types.js";
import { MediaConfig } from "../../src/config/schema.js";
import { sendNotice } from "../../src/core/render/index.js";
import { FileOutbox, ThreadFiles } from "../../src/harness/files.js";
import { silentLogger } from "../../src/log/logger.js";
import { MediaDesk } from "../../src/media/desk.js";
import { startTestGateway, type TestGateway } from "../contract/gateway.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { alice, startRig as startTelegram, waitFor } from "../fakes/telegram/rig.js";
import { newConversationId, WebBrowser } from "../fakes/web/client.js";
import type { ChatTab } from "../fakes/web/tab.js";
import { wires as allWires, type Wire } from "./wires.js";

const wires = allWires();

/** The notice the media desk gives for a file of a type the chat does not take. */
async function refusedTypeNotice(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "antler-notice-"));
  try {
    const config = MediaConfig.parse({ allowed_types: ["image/*", "audio/*"] });
    const desk = new MediaDesk({
      config,
      files: new ThreadFiles(dir),
      outbox: new FileOutbox(),
      logger: silentLogger(),
      vision: () => false,
    });
    const msg = {
      channel: "t",
      eventId: "e1",
      ref: { channel: "t", key: "t:w:c", chatId: "c", chatType: "direct" },
      user: { id: "u1" },
      text: "",
      mentioned: true,
      attachments: [{ kind: "file", name: "__init__.py", mime: "text/x-python", size: 10, source: {} }],
    } as unknown as InboundMessage;
    const intake = await desk.intake({} as Channel, msg, "thread-1", "default");
    expect(intake.notices).toHaveLength(1);
    return intake.notices[0]!;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

let wire: Wire | undefined;
let gw: TestGateway | undefined;
let model: MockModel | undefined;
let tab: ChatTab | undefined;
afterEach(async () => {
  await tab?.close();
  tab = undefined;
  await wire?.close();
  wire = undefined;
  await gw?.stop(false);
  gw = undefined;
  await model?.close();
  model = undefined;
});

describe("a notice is text", () => {
  it("the refused-type notice names the file and the types exactly", async () => {
    const notice = await refusedTypeNotice();
    expect(notice).toContain("“__init__.py”");
    expect(notice).toContain("image/*, audio/*");
  });

  it("escapes only what Markdown would read as markup, and renders back to itself", () => {
    expect(literalMarkdown("Please send it again in a moment.")).toBe("Please send it again in a moment.");
    expect(literalMarkdown("send_email wants to run")).toBe("send_email wants to run");
    const tricky = [
      "__init__.py and image/*, audio/*",
      "**not bold** _not italic_ ~~not struck~~ `not code`",
      "[not a link](https://example.com) <b>not a tag</b> &amp; stays",
      "# not a heading\n- not a list\n1. not numbered\n> not a quote\n    not code\n===",
      "a \\ backslash, a | pipe, and reject <reason>",
    ];
    // An indent that would make a code block is kept as no-break spaces, which look the same.
    const looks = (text: string) => text.replaceAll("\u00a0", " ");
    for (const text of tricky) expect(looks(renderMarkdown(literalMarkdown(text), plainEmitter))).toBe(text);
  });
});

describe.each(Object.keys(wires))("%s: a notice shows as written", (platform) => {
  it("naming __init__.py and image/*", { timeout: 60_000 }, async () => {
    const notice = await refusedTypeNotice();
    // mrkdwn has no escape for backticks: a pair of them on one line shows as code on Slack.
    const ticks = platform === "slack" ? "" : " `ticks`";
    const extra = `Names like **bold** _x_ and <tags> &${ticks} stay as typed.\n- a line\n1. another`;
    wire = await wires[platform]!();
    const before = wire.shown().length;
    await sendNotice(wire.channel, wire.ref, notice);
    await sendNotice(wire.channel, wire.ref, extra);
    const shown = await waitFor(() => wire!.shown().length >= before + 2 && wire!.shown().slice(before), 10_000, "the notices");
    expect(shown[0]).toContain("__init__.py");
    expect(shown[0]).toContain("image/*, audio/*");
    expect(shown[0]!.trim()).toBe(notice);
    expect(shown[1]!.trim()).toBe(extra);
  });
});

describe("a refused upload", () => {
  it("tells the user in plain words; the platform's error goes to the status, not the chat", { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "antler-upload-"));
    const rig = await startTelegram();
    wire = { channel: rig.channel, ref: undefined as never, shown: () => [], close: rig.close };
    try {
      rig.fake.dm(alice, "hi");
      const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 10_000, "the DM");
      const files = new ThreadFiles(dir);
      const outbox = new FileOutbox();
      const config = MediaConfig.parse({});
      const desk = new MediaDesk({ config, files, outbox, logger: silentLogger(), vision: () => false });
      outbox.add("thread-1", await files.save("thread-1", "__init__.py", new TextEncoder().encode("x = 1\n")));
      rig.fake.inject({ method: "sendDocument", code: 500, description: "Internal Server Error" });
      const errors: unknown[] = [];
      const notices = await desk.deliver(rig.channel, msg!.ref, "thread-1", (err) => errors.push(err));
      expect(notices).toEqual(["I couldn't send “__init__.py”. Please ask again in a moment."]);
      expect(String(errors[0])).toContain("500");
      await sendNotice(rig.channel, msg!.ref, notices[0]!);
      const shown = await waitFor(() => rig.fake.botMessages(alice.id).at(-1)?.text, 10_000, "the notice");
      expect(shown).toBe(notices[0]);
      expect(shown).not.toMatch(/500|sendDocument|Internal Server Error/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("web chat: a notice shows as written", () => {
  it("repeats the user's input exactly", { timeout: 60_000 }, async () => {
    model = await startMockModel();
    gw = await startTestGateway({ channels: { web: { enabled: true, edit_interval_ms: 50 } }, model });
    tab = await new WebBrowser(`http://127.0.0.1:${gw.port}/chat`).tab(newConversationId()).open();
    await tab.say("/agent __init__.py image/*, audio/*");
    const shown = await waitFor(() => tab!.messages.find((m) => m.text.startsWith("There is no agent")), 10_000, "the notice");
    // What a person reads is the page's HTML as text.
    expect(shown.text).toContain('There is no agent named "__init__.py image/*, audio/*" here.');
  });
});
