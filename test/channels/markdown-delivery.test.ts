/**
 * Long corpus replies streamed through the real renderer and each real adapter into its fake
 * platform, which refuses what the platform refuses (bad markup, text over its limit). Every
 * message must be accepted, the reply must stay exact, and a reader must see all of it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { renderRun } from "../../src/channels/render/index.js";
import { measureFor } from "../../src/channels/render/markdown/index.js";
import type { Channel, ConversationRef } from "../../src/channels/types.js";
import type { RunEvent } from "../../src/harness/types.js";
import { silentLogger } from "../../src/log/logger.js";
import { startRig as startDingTalk } from "../fakes/dingtalk/rig.js";
import { ALICE } from "../fakes/discord/index.js";
import { startRig as startDiscord } from "../fakes/discord/rig.js";
import { startRig as startFeishu } from "../fakes/feishu/rig.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { parseMrkdwn } from "../fakes/slack/mrkdwn.js";
import { adapterRig as slackRig } from "../fakes/slack/rig.js";
import { alice, startRig as startTelegram, waitFor } from "../fakes/telegram/rig.js";
import { longSamples, missingFromReply } from "../fixtures/markdown/corpus.js";

/** One adapter against its fake, with a user's conversation open. */
interface Wire {
  channel: Channel;
  ref: ConversationRef;
  /** What a reader sees in each bot message of the conversation, oldest first. */
  shown(): string[];
  close(): Promise<void>;
}

/** Edits as often as each adapter allows, so the test does not wait on pacing. */
const FAST = { edit_interval_ms: 150 };

const wires: Record<string, () => Promise<Wire>> = {
  async telegram() {
    const rig = await startTelegram(FAST);
    rig.fake.dm(alice, "hi");
    const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 5000, "the DM");
    return {
      channel: rig.channel,
      ref: msg!.ref,
      shown: () => rig.fake.botMessages(alice.id).map((m) => m.text),
      close: rig.close,
    };
  },
  async slack() {
    const fake = await FakeSlack.start({ mode: "socket" });
    const rig = await slackRig(fake, FAST);
    await rig.start();
    await fake.dm("hi");
    const ref = rig.inbox[0]!.ref;
    const close = async () => {
      await rig.stop();
      await fake.close();
    };
    // Read with the mrkdwn reader, which also shows emphasis as formatted (the fake's own view keeps the marks).
    const shown = () => fake.api.messages.filter((m) => m.byBot && m.channel === ref.chatId).map((m) => parseMrkdwn(m.text).text);
    return { channel: rig.channel, ref, shown, close };
  },
  async feishu() {
    const rig = await startFeishu({ config: FAST });
    await rig.fake.userSays({ text: "hi" });
    const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 5000, "the message");
    return {
      channel: rig.channel,
      ref: msg!.ref,
      shown: () => rig.fake.botMessages(msg!.ref.chatId).map((m) => m.text),
      close: rig.close,
    };
  },
  async dingtalk() {
    const rig = await startDingTalk();
    await rig.fake.userSays("hi");
    const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 5000, "the message");
    return {
      channel: rig.channel,
      ref: msg!.ref,
      shown: () => rig.fake.messagesIn(rig.fake.dmId()).map((m) => m.text),
      close: rig.close,
    };
  },
  async discord() {
    const rig = await startDiscord(FAST);
    rig.fake.dm(ALICE, "hi");
    const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 5000, "the DM");
    const dm = rig.fake.dmChannelOf(ALICE);
    return {
      channel: rig.channel,
      ref: msg!.ref,
      shown: () =>
        rig.fake
          .messagesIn(dm)
          .filter((m) => m.author.id === rig.fake.bot.id)
          .map((m) => m.text),
      close: rig.close,
    };
  },
};

async function* streamed(text: string): AsyncGenerator<RunEvent> {
  for (let i = 0; i < text.length; i += 400) {
    yield { type: "text", delta: text.slice(i, i + 400) };
    await new Promise((resolve) => setImmediate(resolve));
  }
  yield { type: "done", text };
}

// A table that grows past Telegram's limit once laid out, escapes that push Slack past 4,000,
// code cut across messages, and everything in the corpus at once.
const replies = longSamples().filter((s) => ["long-table", "escape-heavy", "long-code", "long-mixed"].includes(s.name));

let wire: Wire | undefined;
afterEach(async () => {
  await wire?.close();
  wire = undefined;
});

describe.each(Object.keys(wires))("%s: long corpus replies through the adapter to the fake", (platform) => {
  it("are accepted whole, exact, and fully visible", { timeout: 60_000 }, async () => {
    wire = await wires[platform]!();
    for (const reply of replies) {
      const before = wire.shown().length;
      const errors: unknown[] = [];
      const outcome = await renderRun(streamed(reply.markdown), {
        channel: wire.channel,
        ref: wire.ref,
        logger: silentLogger(),
        questionId: "q",
        hooks: { onError: (err) => errors.push(err) },
      });
      expect(errors, reply.name).toEqual([]);
      expect(outcome).toMatchObject({ kind: "done", text: reply.markdown });
      // Too long for one message once converted: it was split (the fake refuses a message over the limit).
      const { maxTextLength, markdown } = wire.channel.capabilities;
      if (measureFor(markdown)!(reply.markdown) > maxTextLength) expect(outcome.messages.length, reply.name).toBeGreaterThan(1);
      expect(missingFromReply(reply.markdown, wire.shown().slice(before).join("\n")), reply.name).toEqual([]);
    }
  });
});
