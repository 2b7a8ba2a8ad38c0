/**
 * What the HTTP abuse probe attacks: every route of the gateway, with the four platforms'
 * webhook modes on (Telegram webhook, Slack HTTP events, Feishu webhook with encryption,
 * DingTalk HTTP callback), each against its fake. A route knows how to make a request look
 * authentic (signature, secret or admin token), how to forge one, how to replay one with an
 * old timestamp, and which body would start a run if the route let it through.
 */
import { createHmac, randomBytes } from "node:crypto";
import { FakeDingTalk } from "../fakes/dingtalk/index.js";
import { DM_CHAT, encryptPayload, FakeFeishu, signature as larkSignature, USER } from "../fakes/feishu/index.js";
import { FakeSlack, slackSignature } from "../fakes/slack/index.js";
import { slackConfigFor } from "../fakes/slack/rig.js";
import { ADMIN_TOKEN } from "./gateway-process.js";
import type { ProbeContext } from "./harness.js";
import type { BotMessage } from "./ledger.js";
import { expectedReply } from "./model.js";
import type { TelegramWorld } from "./telegram.js";

type Headers = Record<string, string>;

export interface Route {
  method: string;
  path: string;
  /** Headers that make `body` authentic (none for public routes and the never-authentic restart). */
  sign(body: string): Headers;
  forge?(body: string): Headers;
  /** Authentic but old: the signature's timestamp is long past. */
  replay?(body: string): Headers;
  /** Turns a plain JSON payload into what the platform posts (Feishu encrypts it). */
  wrap(plain: string): string;
  /** A real message event (sent at `at`, default now): a run starts if the route lets it through. */
  valid?(at?: number): string;
}

/** One real message per platform, sent after the abuse: the webhooks must still work. */
export interface Control {
  id: string;
  chat: string;
  send(): Promise<void>;
  view(): BotMessage[];
}

export interface Targets {
  routes: Route[];
  controls: Control[];
  channels: Record<string, unknown>;
}

const TG_SECRET = "reliability_secret-1";
const JSON_TYPE = { "content-type": "application/json" };
const plainWrap = (plain: string) => plain;
const seq = (() => {
  let n = 0;
  return () => ++n;
})();

export async function startTargets(ctx: ProbeContext, world: TelegramWorld, gatewayUrl: string): Promise<Targets> {
  const slack = await FakeSlack.start({ mode: "webhook" });
  ctx.defer(() => slack.close());
  slack.eventsUrl = `${gatewayUrl}/slack/events`;
  const feishu = await new FakeFeishu({ encryptKey: "reliability-encrypt-key", verificationToken: "reliability-vtoken" }).start();
  ctx.defer(() => feishu.close());
  feishu.via = "webhook";
  feishu.webhookTarget = `${gatewayUrl}/webhooks/feishu`;
  const dingtalk = await FakeDingTalk.start();
  ctx.defer(() => dingtalk.close());
  dingtalk.callbackUrl = `${gatewayUrl}/dingtalk/dingtalk/callback`;
  const channels = {
    telegram: world.channelConfig({ mode: "webhook", webhook_url: `${gatewayUrl}/webhooks/telegram`, webhook_secret: TG_SECRET }),
    slack: { enabled: true, ...slackConfigFor(slack) },
    feishu: {
      enabled: true,
      mode: "webhook",
      app_id: feishu.options.appId,
      app_secret: feishu.options.appSecret,
      domain: feishu.url,
      encrypt_key: feishu.options.encryptKey,
      verification_token: feishu.options.verificationToken,
    },
    dingtalk: {
      enabled: true,
      mode: "http",
      ...dingtalk.connection(),
    },
  };
  const routes = [...adminRoutes(), telegramRoute(), slackRoute(slack), feishuRoute(feishu), dingtalkRoute(dingtalk)];
  return { routes, controls: controls(world, slack, feishu, dingtalk), channels };
}

function adminRoutes(): Route[] {
  const bearer = (token: string) => () => ({ authorization: `Bearer ${token}` });
  const publicRoute = (path: string): Route => ({ method: "GET", path, sign: () => ({}), wrap: plainWrap });
  const guarded = (method: string, path: string, authentic = true): Route => ({
    method,
    path,
    sign: authentic ? bearer(ADMIN_TOKEN) : () => ({}),
    forge: bearer("not-the-admin-token"),
    wrap: plainWrap,
  });
  return [
    publicRoute("/healthz"),
    publicRoute("/readyz"),
    guarded("GET", "/api/channels"),
    guarded("GET", "/api/channels/telegram"),
    // Never sent with the real token: that would really restart the channel.
    guarded("POST", "/api/channels/telegram/restart", false),
    guarded("GET", "/api/agent"),
    guarded("GET", "/api/mcp"),
    guarded("GET", "/metrics"),
    guarded("GET", "/"),
  ];
}

function telegramRoute(): Route {
  return {
    method: "POST",
    path: "/webhooks/telegram",
    sign: () => ({ ...JSON_TYPE, "x-telegram-bot-api-secret-token": TG_SECRET }),
    forge: () => ({ ...JSON_TYPE, "x-telegram-bot-api-secret-token": "forged_secret" }),
    wrap: plainWrap,
    valid: () => {
      const from = { id: 424_242, is_bot: false, first_name: "Mallory" };
      const message = {
        message_id: seq(),
        from,
        chat: { id: 424_242, type: "private" },
        date: now() / 1000,
        text: "abuse short",
      };
      return JSON.stringify({ update_id: 990_000 + seq(), message });
    },
  };
}

function slackRoute(slack: FakeSlack): Route {
  const signed = (secret: string, ts: number) => (body: string) => ({
    ...JSON_TYPE,
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": slackSignature(secret, ts, body),
  });
  return {
    method: "POST",
    path: "/slack/events",
    sign: (body) => signed(slack.signingSecret, Math.floor(now() / 1000))(body),
    forge: (body) => signed("forged-secret", Math.floor(now() / 1000))(body),
    replay: (body) => signed(slack.signingSecret, Math.floor(now() / 1000) - 600)(body),
    wrap: plainWrap,
    valid: () => {
      const ts = `${Math.floor(now() / 1000)}.${String(seq()).padStart(6, "0")}`;
      const event = {
        type: "message",
        channel_type: "im",
        user: "U0666",
        text: "abuse short",
        ts,
        channel: "D0666",
        event_ts: ts,
      };
      return JSON.stringify(slack.envelope({ ...event, team: slack.teamId }));
    },
  };
}

function feishuRoute(feishu: FakeFeishu): Route {
  const key = feishu.options.encryptKey as string;
  const signed = (k: string, tsSec: number) => (body: string) => {
    const ts = String(tsSec);
    const nonce = randomBytes(8).toString("hex");
    return {
      ...JSON_TYPE,
      "X-Lark-Request-Timestamp": ts,
      "X-Lark-Request-Nonce": nonce,
      "X-Lark-Signature": larkSignature(ts, nonce, k, body),
    };
  };
  const event = (at: number) => {
    const envelope = feishu.envelope("im.message.receive_v1", {
      sender: { sender_id: { open_id: USER, union_id: "on_mallory", user_id: "" }, sender_type: "user", tenant_key: "t" },
      message: {
        message_id: `om_abuse${seq()}`,
        root_id: "",
        parent_id: "",
        create_time: String(at),
        chat_id: DM_CHAT,
        chat_type: "p2p",
        message_type: "text",
        content: JSON.stringify({ text: "abuse short" }),
        mentions: [],
      },
    });
    envelope.header.create_time = String(at);
    return JSON.stringify({ encrypt: encryptPayload(key, JSON.stringify(envelope)) });
  };
  const threeDays = 3 * 24 * 3600;
  return {
    method: "POST",
    path: "/webhooks/feishu",
    sign: (body) => signed(key, Math.floor(now() / 1000))(body),
    forge: (body) => signed(`${key}x`, Math.floor(now() / 1000))(body),
    replay: (body) => signed(key, Math.floor(now() / 1000) - threeDays)(body),
    wrap: (plain) => JSON.stringify({ encrypt: encryptPayload(key, plain) }),
    // A replayed copy is old inside too: Feishu's create_time is in the envelope.
    valid: (at) => event(at ?? now()),
  };
}

function dingtalkRoute(dingtalk: FakeDingTalk): Route {
  const signed = (secret: string, ts: number) => () => {
    const timestamp = String(ts);
    const sign = createHmac("sha256", secret).update(`${timestamp}\n${secret}`).digest("base64");
    return { ...JSON_TYPE, timestamp, sign };
  };
  return {
    method: "POST",
    path: "/dingtalk/dingtalk/callback",
    sign: () => signed(dingtalk.clientSecret, now())(),
    forge: () => signed("forged-secret", now())(),
    replay: () => signed(dingtalk.clientSecret, now() - 2 * 3600_000)(),
    wrap: plainWrap,
    valid: () =>
      JSON.stringify({
        conversationId: "cid-dm-mallory",
        conversationType: "1",
        msgId: `msgid-abuse-${seq()}`,
        msgtype: "text",
        text: { content: "abuse short" },
        senderId: "$:LWCP_v1:$mallory",
        senderNick: "Mallory",
        senderStaffId: "staff-mallory",
        chatbotUserId: dingtalk.botUserId,
        robotCode: dingtalk.robotCode,
        isInAtList: true,
        sessionWebhook: `${dingtalk.url}/robot/sendBySession?session=none`,
        sessionWebhookExpiredTime: now() + 3600_000,
        createAt: now(),
      }),
  };
}

function controls(world: TelegramWorld, slack: FakeSlack, feishu: FakeFeishu, dingtalk: FakeDingTalk): Control[] {
  const seen = (messages: Array<{ id: string; text: string; versions: Array<{ at: number }> }>): BotMessage[] =>
    messages.map((m) => ({ id: m.id, text: m.text, firstAt: m.versions[0]?.at ?? 0 }));
  return [
    {
      id: "ctl-telegram",
      chat: `telegram:${world.user(1).id}`,
      send: async () => world.send(1, "ctl-telegram", "short"),
      view: () => world.view(String(world.user(1).id)),
    },
    {
      id: "ctl-slack",
      chat: "slack:D0001",
      send: async () => void (await slack.dm("ctl-slack short")),
      view: () => seen(slack.botMessages("D0001")),
    },
    {
      id: "ctl-feishu",
      chat: `feishu:${DM_CHAT}`,
      send: async () => void (await feishu.userSays({ text: "ctl-feishu short" })),
      view: () => seen(feishu.botMessages(DM_CHAT)),
    },
    {
      id: "ctl-dingtalk",
      chat: `dingtalk:${dingtalk.dmId()}`,
      send: async () => void (await dingtalk.userSays("ctl-dingtalk short")),
      view: () => seen(dingtalk.messagesIn(dingtalk.dmId())),
    },
  ];
}

export const controlReply = (id: string) => expectedReply(id, "short");

function now(): number {
  return Date.now();
}
