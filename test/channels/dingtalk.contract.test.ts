import { channelContract } from "../contract/channel-contract.js";
import type { ContractDriver, VisibleMessage } from "../contract/driver.js";
import { FakeDingTalk } from "../fakes/dingtalk/index.js";

const TEMPLATE = "tpl-ai-card.schema";
const INTERVAL_MS = 100;

interface DriverOptions {
  mode: "stream" | "http";
  cards: boolean;
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
      if (options.mode === "http") fake.callbackUrl = `${gatewayUrl}/dingtalk/dingtalk/callback`;
      return {
        enabled: true,
        mode: options.mode,
        client_id: fake.clientId,
        client_secret: fake.clientSecret,
        api_base: fake.url,
        gateway_url: fake.gatewayUrl,
        stream_interval_ms: INTERVAL_MS,
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
    botMessages: (): VisibleMessage[] =>
      fake.messagesIn(dm).map((m) => ({ id: m.id, text: m.text, buttons: m.buttons.map((b) => b.text), versions: m.versions })),
    close: () => fake.close(),
  };
}

channelContract("dingtalk stream mode with AI cards", () => dingTalkDriver({ mode: "stream", cards: true }));
channelContract("dingtalk stream mode, markdown replies", () => dingTalkDriver({ mode: "stream", cards: false }));
channelContract("dingtalk http mode, markdown replies", () => dingTalkDriver({ mode: "http", cards: false }));
