/** A contract driver over the in-process loopback channel (test/fakes/loopback.ts). */
import { LoopbackWorld } from "../fakes/loopback.js";
import type { ContractDriver, VisibleMessage } from "./driver.js";

export function loopbackDriver(options: { buttons: boolean; edits: boolean }): ContractDriver {
  const world = new LoopbackWorld({
    minEditIntervalMs: 100,
    enforceEditInterval: true,
    buttons: options.buttons,
    edits: options.edits,
  });
  let last: Awaited<ReturnType<LoopbackWorld["userSays"]>> | undefined;
  return {
    channelName: "loop",
    minEditIntervalMs: 100,
    streams: options.edits,
    buttons: options.buttons,
    channelConfig: () => world.channelConfig(),
    async userSays(text) {
      last = await world.userSays(text);
    },
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
    botMessages: (): VisibleMessage[] =>
      world.botMessages().map((m) => ({ id: m.id, text: m.text, buttons: m.buttons.map((b) => b.label), versions: m.versions })),
    async close() {},
  };
}
