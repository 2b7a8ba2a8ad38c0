/** The contract driver over the fake DingTalk: a DM, and a group whose members all @mention the robot. */
import type { BotFile, ContractDriver, GroupDriver, GroupMember, UserFile, VisibleMessage } from "../../contract/driver.js";
import { sleep } from "../../contract/gateway.js";
import { ALICE, BOB, type Delivery, FakeDingTalk, type FakeUser } from "./index.js";

const TEMPLATE = "tpl-ai-card.schema";
const INTERVAL_MS = 100;
const GROUP = "cid-group-1";
const CAROL: FakeUser = { staffId: "staff-carol", senderId: "$:LWCP_v1:$carol", nick: "Carol" };
const MEMBERS: Record<GroupMember, FakeUser> = { asker: ALICE, other: BOB, approver: CAROL };

export interface DriverOptions {
  mode: "stream" | "webhook";
  cards: boolean;
  /** Groups: `user` gives each sender a thread of their own, `chat` one shared thread. */
  scope: "user" | "chat";
}

/** The group: every message @mentions the robot; DingTalk has no message only one member sees. */
function groupOf(fake: FakeDingTalk, scope: DriverOptions["scope"]): GroupDriver {
  return {
    userId: (member) => MEMBERS[member].staffId,
    sharedThread: scope === "chat",
    privateClickNotice: false,
    privateTextNotice: false,
    async says(member, text) {
      await fake.userSays(text, { group: GROUP, user: MEMBERS[member] });
    },
    async click(member, label) {
      fake.click(label, MEMBERS[member]);
    },
    botMessages: () => fake.messagesIn(GROUP).map(visible),
    shownOnlyTo: () => [],
  };
}

function visible(m: { id: string; text: string; buttons: Array<{ text: string }>; versions: VisibleMessage["versions"] }) {
  return { id: m.id, text: m.text, buttons: m.buttons.map((b) => b.text), versions: m.versions };
}

/** The contract driver, with its fake for tests that inject faults. */
export type DingTalkDriver = ContractDriver & { readonly fake: FakeDingTalk };

export async function dingTalkDriver(options: DriverOptions): Promise<DingTalkDriver> {
  const fake = await FakeDingTalk.start({
    templates: { [TEMPLATE]: { contentKey: "content", buttonsKey: "buttons" } },
    resendAfterMs: 2_000,
  });
  const dm = fake.dmId();
  let last: Delivery | undefined;
  return {
    fake,
    channelName: "dingtalk",
    webhook: options.mode === "webhook",
    minEditIntervalMs: INTERVAL_MS,
    streams: options.cards,
    buttons: options.cards && options.mode === "stream",
    channelConfig({ gatewayUrl }) {
      if (options.mode === "webhook") fake.callbackUrl = `${gatewayUrl}/webhooks/dingtalk`;
      return {
        enabled: true,
        mode: options.mode,
        ...fake.connection(),
        edit_interval_ms: INTERVAL_MS,
        session_scope: options.scope,
        ...(options.cards ? { card_template_id: TEMPLATE, card_buttons_key: "buttons" } : {}),
      };
    },
    async userSays(text) {
      last = await fake.userSays(text);
    },
    // DingTalk carries text with pictures only (as rich text); files, voice and video come bare.
    fileCaptions: false,
    // In the same DM as userSays.
    async userSendsFile(file: UserFile) {
      last = await fake.userSendsFile(file);
    },
    botFiles: (): BotFile[] => fake.filesIn(dm).map((f) => ({ name: f.name, data: f.data, kind: f.kind })),
    // Webhook: the status Antler answered. Stream: whether the frame was acked, given a moment.
    async lastDelivery() {
      if (!last) throw new Error("nothing was delivered yet");
      if (last.status !== undefined) return last.status >= 200 && last.status < 300 ? "acked" : "refused";
      const id = last.messageId as string;
      await sleep(300);
      return fake.gateway.acked(id) ? "acked" : "refused";
    },
    redeliverLast: () => fake.redeliverLast(),
    async click(label) {
      fake.click(label);
    },
    async botEcho(text) {
      await fake.botEcho(text);
    },
    botMessages: (): VisibleMessage[] => fake.messagesIn(dm).map(visible),
    group: groupOf(fake, options.scope),
    close: () => fake.close(),
  };
}
