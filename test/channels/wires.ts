/**
 * One real adapter per platform against its fake, with a user's conversation open, and what a
 * person reads in the bot's messages (each fake's reader of the platform's markup). Shared by the
 * tests that check what users see: long Markdown replies, and notices.
 */
import type { Channel, ConversationRef } from "../../src/channels/types.js";
import { startRig as startDingTalk } from "../fakes/dingtalk/rig.js";
import { ALICE } from "../fakes/discord/index.js";
import { startRig as startDiscord } from "../fakes/discord/rig.js";
import { startRig as startFeishu } from "../fakes/feishu/rig.js";
import { FakeSlack } from "../fakes/slack/index.js";
import { parseMrkdwn } from "../fakes/slack/mrkdwn.js";
import { adapterRig as slackRig } from "../fakes/slack/rig.js";
import { alice, startRig as startTelegram, waitFor } from "../fakes/telegram/rig.js";

/** One adapter against its fake, with a user's conversation open. */
export interface Wire {
  channel: Channel;
  ref: ConversationRef;
  /** What a person reads in each bot message of the conversation, oldest first. */
  shown(): string[];
  close(): Promise<void>;
}

/** The wires by platform; `config` adds channel keys (e.g. a short `edit_interval_ms`) to each adapter. */
export function wires(config: Record<string, unknown> = {}): Record<string, () => Promise<Wire>> {
  return {
    async telegram() {
      const rig = await startTelegram(config);
      rig.fake.dm(alice, "hi");
      const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 10_000, "the DM");
      // The fake parses the HTML as Telegram does and keeps the text a person reads.
      return {
        channel: rig.channel,
        ref: msg!.ref,
        shown: () => rig.fake.botMessages(alice.id).map((m) => m.text),
        close: rig.close,
      };
    },
    async slack() {
      const fake = await FakeSlack.start({ mode: "socket" });
      const rig = await slackRig(fake, config);
      await rig.start();
      await fake.dm("hi");
      const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 10_000, "the DM");
      const ref = msg!.ref;
      const close = async () => {
        await rig.stop();
        await fake.close();
      };
      // The mrkdwn reader shows emphasis as formatted (the fake's own record keeps the marks).
      const shown = () =>
        fake.api.messages.filter((m) => m.byBot && m.channel === ref.chatId).map((m) => parseMrkdwn(m.text).text);
      return { channel: rig.channel, ref, shown, close };
    },
    async feishu() {
      const rig = await startFeishu({ config });
      await rig.fake.userSays({ text: "hi" });
      const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 10_000, "the message");
      return {
        channel: rig.channel,
        ref: msg!.ref,
        // Card markdown as a person reads it.
        shown: () => rig.fake.botMessages(msg!.ref.chatId).map((m) => m.text),
        close: rig.close,
      };
    },
    async dingtalk() {
      const rig = await startDingTalk();
      await rig.fake.userSays("hi");
      const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 10_000, "the message");
      return {
        channel: rig.channel,
        ref: msg!.ref,
        // The fake reads DingTalk's markdown as DingTalk renders it.
        shown: () => rig.fake.messagesIn(rig.fake.dmId()).map((m) => m.text),
        close: rig.close,
      };
    },
    async discord() {
      const rig = await startDiscord(config);
      rig.fake.dm(ALICE, "hi");
      const [msg] = await waitFor(() => rig.inbox.length > 0 && rig.inbox, 10_000, "the DM");
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
}
