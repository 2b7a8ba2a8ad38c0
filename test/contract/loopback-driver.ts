/** A contract driver over the in-process loopback channel (test/fakes/loopback.ts). */
import { LoopbackWorld, shownText } from "../fakes/loopback.js";
import type { ContractDriver, GroupDriver, GroupMember, VisibleMessage } from "./driver.js";

const GROUP = "g1";
const MEMBERS: Record<GroupMember, { id: string; name: string }> = {
  asker: { id: "u-alice", name: "Alice" },
  other: { id: "u-bob", name: "Bob" },
  approver: { id: "u-carol", name: "Carol" },
};

export function loopbackDriver(options: { buttons: boolean; edits: boolean }): ContractDriver {
  const world = new LoopbackWorld({
    minEditIntervalMs: 100,
    enforceEditInterval: true,
    buttons: options.buttons,
    edits: options.edits,
    // With buttons the channel can also show a notice to one user; without, the core's fallback runs.
    privateNotices: options.buttons,
  });
  let last: Awaited<ReturnType<LoopbackWorld["userSays"]>> | undefined;
  let outcome: "acked" | "refused" = "acked";
  return {
    channelName: "loop",
    minEditIntervalMs: 100,
    streams: options.edits,
    buttons: options.buttons,
    channelConfig: () => world.channelConfig(),
    webhook: false,
    async userSays(text) {
      try {
        last = await world.userSays(text);
        outcome = "acked";
      } catch {
        // The core's sink threw: the "platform" saw the delivery fail.
        last = world.delivered.at(-1);
        outcome = "refused";
      }
    },
    lastDelivery: async () => outcome,
    async redeliverLast() {
      if (!last) throw new Error("nothing to redeliver");
      await world.deliver(last);
    },
    async click(label) {
      await world.click(label);
    },
    async botEcho(text) {
      await world.deliver({
        channel: "loop",
        eventId: `echo-${Date.now()}`,
        ref: { channel: "loop", key: "loop:w:dm1", chatId: "dm1", chatType: "direct" },
        user: { id: "bot" },
        text,
        mentioned: true,
        fromBot: true,
        sentAt: Date.now(),
      });
    },
    botMessages: (): VisibleMessage[] => visible(world, "dm1"),
    async userSendsFile(file) {
      await world.userSendsFile(file);
    },
    botFiles: () => world.sentFiles.filter((f) => f.chatId === "dm1").map(({ name, data, kind }) => ({ name, data, kind })),
    group: groupOf(world, options.buttons),
    async close() {},
  };
}

function visible(world: LoopbackWorld, chatId: string): VisibleMessage[] {
  return (
    world
      .botMessages(chatId)
      // What a person reads: the world keeps the CommonMark it was sent.
      .map((m) => ({ id: m.id, text: shownText(m.text), buttons: m.buttons.map((b) => b.label), versions: m.versions }))
  );
}

/** One group chat `g1` where every member's messages share one conversation. */
function groupOf(world: LoopbackWorld, privateNotices: boolean): GroupDriver {
  return {
    userId: (member) => MEMBERS[member].id,
    sharedThread: true,
    privateClickNotice: privateNotices,
    privateTextNotice: privateNotices,
    async says(member, text) {
      const { id, name } = MEMBERS[member];
      await world.userSays(text, { chatId: GROUP, chatType: "group", userId: id, userName: name, mentioned: true });
    },
    async click(member, label) {
      const { id, name } = MEMBERS[member];
      await world.click(label, { chatId: GROUP, userId: id, userName: name });
    },
    botMessages: () => visible(world, GROUP),
    shownOnlyTo: (member) => world.privateNoticesFor(MEMBERS[member].id, GROUP),
  };
}
