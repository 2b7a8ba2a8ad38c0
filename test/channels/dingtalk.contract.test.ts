import { channelContract } from "../contract/channel-contract.js";
import type { ContractDriver, GroupDriver, GroupMember, VisibleMessage } from "../contract/driver.js";
import { ALICE, BOB, FakeDingTalk, type FakeUser } from "../fakes/dingtalk/index.js";

const TEMPLATE = "tpl-ai-card.schema";
const INTERVAL_MS = 100;
const GROUP = "cid-group-1";
const CAROL: FakeUser = { staffId: "staff-carol", senderId: "$:LWCP_v1:$carol", nick: "Carol" };
const MEMBERS: Record<GroupMember, FakeUser> = { asker: ALICE, other: BOB, approver: CAROL };

interface DriverOptions {
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

async function dingTalkDriver(options: DriverOptions): Promise<ContractDriver> {
  const fake = await FakeDingTalk.start({
    templates: { [TEMPLATE]: { contentKey: "content", buttonsKey: "buttons" } },
    resendAfterMs: 2_000,
  });
  const dm = fake.dmId();
  return {
    channelName: "dingtalk",
    minEditIntervalMs: INTERVAL_MS,
    streams: options.cards,
    buttons: options.cards && options.mode === "stream",
    channelConfig({ gatewayUrl }) {
      if (options.mode === "webhook") fake.callbackUrl = `${gatewayUrl}/webhooks/dingtalk`;
      return {
        enabled: true,
        mode: options.mode,
        client_id: fake.clientId,
        client_secret: fake.clientSecret,
        api_base: fake.url,
        gateway_url: fake.gatewayUrl,
        edit_interval_ms: INTERVAL_MS,
        session_scope: options.scope,
        ...(options.cards ? { card_template_id: TEMPLATE, card_buttons_key: "buttons" } : {}),
      };
    },
    async userSays(text) {
      await fake.userSays(text);
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

// The cards run keeps the default session_scope (user), where a card's buttons were open to
// everyone in the group; the others share one thread per group, where text answers meet.
channelContract("dingtalk stream mode with AI cards", () => dingTalkDriver({ mode: "stream", cards: true, scope: "user" }));
channelContract("dingtalk stream mode, markdown replies", () => dingTalkDriver({ mode: "stream", cards: false, scope: "chat" }));
channelContract("dingtalk webhook mode, markdown replies", () =>
  dingTalkDriver({ mode: "webhook", cards: false, scope: "chat" }),
);
