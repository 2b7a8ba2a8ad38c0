/**
 * The contract driver of the example relay channel (examples/channel): the user's side of a
 * {@link FakeRelay}. The one-to-one room is `dm`, the group room `team`.
 */
import path from "node:path";
import type { ContractDriver, GroupDriver, GroupMember, VisibleMessage } from "antler/testing";
import { FakeRelay } from "./relay-platform.js";

/** Where the example lives: `use:` loads it from there, as a user's config would. */
export const EXAMPLE = path.resolve(import.meta.dirname, "../../examples/channel");

const MEMBERS: Record<GroupMember, { id: string; name: string }> = {
  asker: { id: "u-ann", name: "Ann" },
  other: { id: "u-ben", name: "Ben" },
  approver: { id: "u-cat", name: "Cat" },
};

export async function relayDriver(): Promise<ContractDriver> {
  const relay = new FakeRelay();
  await relay.start();
  let webhook = "";
  let seq = 1;
  let last: Record<string, unknown> | undefined;
  let outcome: "acked" | "refused" = "acked";
  const deliver = async (event: Record<string, unknown>): Promise<void> => {
    last = event;
    const status = await relay.deliver(webhook, event);
    outcome = status >= 200 && status < 300 ? "acked" : "refused";
  };
  const user = { id: "u1", name: "User One" };
  const visible = (room: string): VisibleMessage[] =>
    relay.messages
      .filter((m) => m.room === room)
      .map((m) => ({ id: m.id, text: m.text, buttons: m.buttons.map((b) => b.label), versions: m.versions }));
  const clickIn = async (room: string, who: { id: string; name: string }, label: string, group: boolean) => {
    const message = relay.messages.findLast((m) => m.room === room && m.buttons.some((b) => b.label === label));
    const button = message?.buttons.find((b) => b.label === label);
    if (!message || !button || !message.question) throw new Error(`no message in ${room} shows a button "${label}"`);
    await deliver({
      id: `ev${seq++}`,
      room,
      group,
      user: who,
      click: { message: message.id, question: message.question, button: button.id },
    });
  };
  const group: GroupDriver = {
    userId: (member) => MEMBERS[member].id,
    sharedThread: true,
    // The relay has no message only one person sees: the core's notices go to the whole room.
    privateClickNotice: false,
    privateTextNotice: false,
    says: (member, text) =>
      deliver({ id: `ev${seq++}`, room: "team", group: true, mentioned: true, user: MEMBERS[member], text }),
    click: (member, label) => clickIn("team", MEMBERS[member], label, true),
    botMessages: () => visible("team"),
    shownOnlyTo: () => [],
  };
  return {
    channelName: "relay",
    channelConfig({ gatewayUrl }) {
      webhook = `${gatewayUrl}/webhooks/relay`;
      return { enabled: true, use: `${EXAMPLE}/index.ts:RelayChannel`, outbox_url: `${relay.url}/outbox`, secret: relay.secret };
    },
    streams: true,
    buttons: true,
    minEditIntervalMs: 100,
    webhook: true,
    userSays: (text) => deliver({ id: `ev${seq++}`, room: "dm", user, text }),
    async redeliverLast() {
      if (!last) throw new Error("nothing to redeliver");
      await deliver(last);
    },
    lastDelivery: async () => outcome,
    click: (label) => clickIn("dm", user, label, false),
    botEcho: (text) => deliver({ id: `ev${seq++}`, room: "dm", user: { id: "bot" }, bot: true, text }),
    botMessages: () => visible("dm"),
    async userSendsFile(file) {
      const url = relay.upload(file.data);
      const files = [{ url, name: file.name, mime: file.mime, size: file.data.byteLength, kind: file.kind }];
      await deliver({ id: `ev${seq++}`, room: "dm", user, files, ...(file.caption ? { text: file.caption } : {}) });
    },
    botFiles: () => relay.files.filter((f) => f.room === "dm").map(({ name, data, kind }) => ({ name, data, kind })),
    group,
    close: () => relay.close(),
  };
}
