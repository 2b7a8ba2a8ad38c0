/** The fake Feishu itself refuses what the platform refuses, so adapter tests can trust it. */
import * as lark from "@larksuiteoapi/node-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { FakeFeishu } from "../fakes/feishu/index.js";

let fake: FakeFeishu | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(): Promise<{
  fake: FakeFeishu;
  call: (
    method: string,
    path: string,
    body?: unknown,
  ) => Promise<{ status: number; body: { code: number; data?: Record<string, string> } }>;
}> {
  fake = await new FakeFeishu().start();
  fake.via = "none";
  const f = fake;
  const token = (await (
    await fetch(`${f.url}/open-apis/auth/v3/tenant_access_token/internal`, {
      method: "POST",
      body: JSON.stringify({ app_id: f.options.appId, app_secret: f.options.appSecret }),
    })
  ).json()) as { tenant_access_token: string };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${f.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token.tenant_access_token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { code: number; data?: Record<string, string> } };
  };
  return { fake: f, call };
}

const streamingCard = JSON.stringify({
  schema: "2.0",
  config: { streaming_mode: true },
  body: { elements: [{ tag: "markdown", element_id: "md", content: "" }] },
});

describe("fake feishu", () => {
  it("refuses calls without a valid tenant token", async () => {
    const { fake: f } = await setup();
    const res = await fetch(`${f.url}/open-apis/bot/v3/info`, { headers: { authorization: "Bearer nope" } });
    expect(((await res.json()) as { code: number }).code).toBe(99991663);
  });

  it("enforces strictly increasing CardKit sequences and closed streaming", async () => {
    const { call } = await setup();
    const created = await call("POST", "/open-apis/cardkit/v1/cards", { type: "card_json", data: streamingCard });
    const id = created.body.data?.card_id;
    const put = (sequence: number) =>
      call("PUT", `/open-apis/cardkit/v1/cards/${id}/elements/md/content`, { content: "x", sequence });
    expect((await put(1)).body.code).toBe(0);
    expect((await put(1)).body.code).toBe(300317);
    expect((await put(0)).body.code).toBe(300317);
    const settings = JSON.stringify({ config: { streaming_mode: false } });
    expect((await call("PATCH", `/open-apis/cardkit/v1/cards/${id}/settings`, { settings, sequence: 2 })).body.code).toBe(0);
    expect((await put(3)).body.code).toBe(300309);
  });

  it("limits a card to 10 operations a second with 429 + 99991400", async () => {
    const { call, fake: f } = await setup();
    const created = await call("POST", "/open-apis/cardkit/v1/cards", { type: "card_json", data: streamingCard });
    const id = created.body.data?.card_id;
    const results = [];
    for (let seq = 1; seq <= 11; seq++) {
      results.push(
        await call("PUT", `/open-apis/cardkit/v1/cards/${id}/elements/md/content`, { content: `t${seq}`, sequence: seq }),
      );
    }
    expect(results.slice(0, 10).every((r) => r.status === 200)).toBe(true);
    expect(results[10]).toMatchObject({ status: 429, body: { code: 99991400 } });
    expect(f.world.rateLimited()).toHaveLength(1);
  });

  it("ignores message PATCH on cards sent by card_id, and refuses it on cards without update_multi", async () => {
    const { call, fake: f } = await setup();
    const user = await f.userSays({ text: "hi" });
    const created = await call("POST", "/open-apis/cardkit/v1/cards", { type: "card_json", data: streamingCard });
    const content = JSON.stringify({ type: "card", data: { card_id: created.body.data?.card_id } });
    const sent = await call("POST", `/open-apis/im/v1/messages/${user.messageId}/reply`, { msg_type: "interactive", content });
    const id = sent.body.data?.message_id as string;
    const newCard = JSON.stringify({
      schema: "2.0",
      config: { update_multi: true },
      body: { elements: [{ tag: "markdown", content: "new" }] },
    });
    expect((await call("PATCH", `/open-apis/im/v1/messages/${id}`, { content: newCard })).body.code).toBe(0);
    expect(f.world.message(id)?.text).toBe("");
    const again = await call("POST", `/open-apis/im/v1/messages/${user.messageId}/reply`, { msg_type: "interactive", content });
    expect(again.body.code).toBe(300301);
    const unshared = JSON.stringify({ schema: "2.0", body: { elements: [{ tag: "markdown", content: "old" }] } });
    const plain = await call("POST", `/open-apis/im/v1/messages/${user.messageId}/reply`, {
      msg_type: "interactive",
      content: unshared,
    });
    const patched = await call("PATCH", `/open-apis/im/v1/messages/${plain.body.data?.message_id}`, { content: newCard });
    expect(patched.body.code).toBe(230099);
  });

  it("refuses malformed cards and stops text edits after 20", async () => {
    const { call, fake: f } = await setup();
    const user = await f.userSays({ text: "hi" });
    const bad = await call("POST", `/open-apis/im/v1/messages/${user.messageId}/reply`, {
      msg_type: "interactive",
      content: JSON.stringify({ elements: [] }),
    });
    expect(bad.body.code).toBe(230099);
    const sent = await call("POST", `/open-apis/im/v1/messages/${user.messageId}/reply`, {
      msg_type: "text",
      content: JSON.stringify({ text: "v0" }),
    });
    const id = sent.body.data?.message_id;
    for (let i = 1; i <= 20; i++) {
      const r = await call("PUT", `/open-apis/im/v1/messages/${id}`, {
        msg_type: "text",
        content: JSON.stringify({ text: `v${i}` }),
      });
      expect(r.body.code).toBe(0);
    }
    const over = await call("PUT", `/open-apis/im/v1/messages/${id}`, {
      msg_type: "text",
      content: JSON.stringify({ text: "v21" }),
    });
    expect(over.body.code).toBe(230072);
  });

  it("refuses a long connection with the wrong secret", async () => {
    fake = await new FakeFeishu().start();
    const errors: Error[] = [];
    const ws = new lark.WSClient({
      appId: fake.options.appId,
      appSecret: "wrong",
      domain: fake.url,
      loggerLevel: lark.LoggerLevel.fatal,
      onError: (e: Error) => errors.push(e),
    });
    await ws.start({ eventDispatcher: new lark.EventDispatcher({ loggerLevel: lark.LoggerLevel.fatal }) });
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    ws.close({ force: true });
    expect(errors[0]?.message).toMatch(/code=514/);
    expect(fake.ws.connected).toBe(0);
  });
});
