/**
 * DingTalk acceptance through a whole gateway (dispatcher, renderer, harness with the mock
 * model): acks and redelivery, card streaming, one markdown reply, throttling retried.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventually, sleep, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { FakeDingTalk, type FakeDingTalkOptions } from "../fakes/dingtalk/index.js";
import { contentText } from "../fakes/openai.js";

const TEMPLATE = "tpl-ai-card.schema";
const REPLY = "DingTalk gets this reply piece by piece, and the final card must show exactly these words.";

let fake: FakeDingTalk | undefined;
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.stop();
  await fake?.close();
  gw = undefined;
  fake = undefined;
});

async function boot(config: Record<string, unknown>, opts: FakeDingTalkOptions = {}) {
  const f = await FakeDingTalk.start({ templates: { [TEMPLATE]: { contentKey: "content", buttonsKey: "buttons" } }, ...opts });
  fake = f;
  const section = {
    enabled: true,
    ...f.connection(),
    stream_interval_ms: 100,
    ...config,
  };
  gw = await startTestGateway({ channels: { dingtalk: section } });
  expect(gw.gateway.slot("dingtalk")?.report().state).toBe("running");
  return { fake: f, gw };
}

const replies = (f: FakeDingTalk) => f.messagesIn(f.dmId());

describe("dingtalk through the gateway", () => {
  it("streams an AI card: several updates, exact final text, finalized", async () => {
    const { fake: f, gw: g } = await boot({ card_template_id: TEMPLATE });
    g.model.enqueue({ text: REPLY, chunkSize: 5, delayMs: 20 });
    await f.userSays("stream please");
    const card = await eventually(() => replies(f).find((m) => m.card?.flowStatus === "3"), 15_000, "a finalized card");
    expect(card.text).toBe(REPLY);
    expect(card.card!.streamed).toBeGreaterThanOrEqual(2);
    expect(card.versions.filter((v) => v.text !== "").length).toBeGreaterThanOrEqual(2);
    expect(replies(f)).toHaveLength(1);
  });

  it("sends one markdown reply with the exact text when there is no template", async () => {
    const { fake: f, gw: g } = await boot({});
    g.model.enqueue({ text: REPLY, chunkSize: 5, delayMs: 10 });
    await f.userSays("plain please");
    const msg = await eventually(() => replies(f)[0], 15_000, "the reply");
    await sleep(300);
    expect(replies(f)).toHaveLength(1);
    expect(msg).toMatchObject({ kind: "markdown", via: "webhook", text: REPLY });
    expect(msg.versions).toHaveLength(1);
  });

  it("acks every frame and answers a frame resent after a lost ack only once", async () => {
    const { fake: f, gw: g } = await boot({}, { resendAfterMs: 500 });
    g.model.enqueue({ text: "Just once." });
    f.gateway.dropAcks(1);
    const sent = await f.userSays("hello once");
    await eventually(() => replies(f)[0], 15_000, "the reply");
    await eventually(() => f.gateway.acked(sent!.messageId!), 5_000, "the ack of the resent frame");
    await sleep(300);
    expect(f.gateway.sent.filter((fr) => fr.headers.messageId === sent!.messageId)).toHaveLength(2);
    const asked = g.model.requests.filter((r) => contentText(r.messages.at(-1)?.content) === "hello once");
    expect(asked).toHaveLength(1);
    expect(replies(f).map((m) => m.text)).toEqual(["Just once."]);
    const unacked = f.gateway.sent.filter((fr) => !f.gateway.acked(fr.headers.messageId ?? ""));
    expect(unacked).toEqual([]);
  });

  it("retries throttled card updates with backoff and still finalizes the exact text", async () => {
    const { fake: f, gw: g } = await boot({ card_template_id: TEMPLATE });
    f.fail("card.stream", "qps", 2);
    g.model.enqueue({ text: REPLY, chunkSize: 8, delayMs: 20 });
    await f.userSays("throttle me");
    const card = await eventually(() => replies(f).find((m) => m.card?.flowStatus === "3"), 20_000, "a finalized card");
    expect(card.text).toBe(REPLY);
    expect(f.calls.filter((c) => c.api === "card.stream" && c.status === 403)).toHaveLength(2);
  });

  it("retries a sessionWebhook 'send too fast' and the final text arrives", async () => {
    const { fake: f, gw: g } = await boot({});
    f.fail("webhook", "too_fast", 1);
    g.model.enqueue({ text: "Arrives after a pause." });
    await f.userSays("throttle the webhook");
    const msg = await eventually(() => replies(f)[0], 20_000, "the reply");
    expect(msg.text).toBe("Arrives after a pause.");
    const hooks = f.calls.filter((c) => c.api === "webhook");
    expect(hooks.map((c) => (c.body as { markdown?: { text?: string } }).markdown?.text)).toEqual([
      "Arrives after a pause.",
      "Arrives after a pause.",
    ]);
    expect(hooks[1]!.at - hooks[0]!.at).toBeGreaterThanOrEqual(2_900);
  });
});
