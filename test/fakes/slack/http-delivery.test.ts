/** The fake Slack's Events API delivery over several URLs: spread, retries to another URL, faults. */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { closeServer } from "../../../src/server/http.js";
import { FakeSlack } from "./index.js";

interface Hit {
  app: string;
  eventId: string;
  headers: IncomingHttpHeaders;
}

const servers: Server[] = [];
let fake: FakeSlack | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
  for (const s of servers.splice(0)) await closeServer(s);
});

/** An app replica that answers every event 200 (or after `delayMs`) and records what reached it. */
async function app(name: string, hits: Hit[], delayMs = 0): Promise<string> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { event_id: string };
    hits.push({ app: name, eventId: body.event_id, headers: req.headers });
    setTimeout(() => res.writeHead(200).end(), delayMs);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/slack`;
}

describe("fake Slack Events API over several URLs", () => {
  it("spreads deliveries round-robin and records which URL got each", async () => {
    const hits: Hit[] = [];
    fake = await FakeSlack.start({ mode: "webhook", companionMessages: false });
    fake.eventsUrls = [await app("a", hits), await app("b", hits), await app("c", hits)];
    for (let i = 0; i < 6; i++) await fake.dm(`hello ${i}`);
    expect(hits.map((h) => h.app)).toEqual(["a", "b", "c", "a", "b", "c"]);
    expect(fake.deliveries.map((d) => d.url)).toEqual(fake.eventsUrls.concat(fake.eventsUrls));
    expect(fake.deliveries.every((d) => d.ok && d.retryNum === 0)).toBe(true);
  });

  it("retries a timed-out or failed first try at another URL, with the retry headers", async () => {
    const hits: Hit[] = [];
    fake = await FakeSlack.start({ mode: "webhook", companionMessages: false, http: { retryDelaysMs: [0, 50, 50] } });
    fake.eventsUrls = [await app("a", hits), await app("b", hits)];
    fake.injectDeliveryFault({ kind: "timeout", times: 1 });
    fake.injectDeliveryFault({ kind: "connection_failed", times: 1 });
    await fake.dm("first");
    await fake.dm("second");
    const [first, retry, failed, second] = fake.deliveries;
    // The timed-out try reached its app all the same; the retry went to the other one.
    expect(first).toMatchObject({ ok: false, failure: "http_timeout", retryNum: 0 });
    expect(retry).toMatchObject({ ok: true, retryNum: 1, retryReason: "http_timeout" });
    expect(retry?.url).not.toBe(first?.url);
    expect(failed).toMatchObject({ ok: false, failure: "connection_failed", retryNum: 0 });
    expect(second).toMatchObject({ ok: true, retryNum: 1, retryReason: "connection_failed" });
    expect(second?.url).not.toBe(failed?.url);
    expect(hits.map((h) => h.eventId)).toEqual([hits[0]?.eventId, hits[0]?.eventId, hits[2]?.eventId]);
    expect(hits[1]?.headers).toMatchObject({ "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" });
    expect(hits[0]?.headers["x-slack-retry-num"]).toBeUndefined();
  });

  it("counts no 2xx within the ack timeout as a timeout, and a URL nobody listens on as a failed connection", async () => {
    const hits: Hit[] = [];
    fake = await FakeSlack.start({ mode: "webhook", companionMessages: false, http: { retryDelaysMs: [0], ackTimeoutMs: 200 } });
    const slow = await app("slow", hits, 1_000);
    const fast = await app("fast", hits);
    fake.eventsUrls = [slow, fast];
    await fake.dm("slow first");
    expect(fake.deliveries.map((d) => [d.url === slow, d.failure ?? "ok"])).toEqual([
      [true, "http_timeout"],
      [false, "ok"],
    ]);
    const dead = await app("dead", []);
    await closeServer(servers.pop() as Server);
    fake.eventsUrls = [dead, fast];
    fake.deliveries.length = 0;
    await fake.dm("dead first");
    expect(fake.deliveries.map((d) => d.failure ?? "ok")).toEqual(["connection_failed", "ok"]);
  });

  it("delivers once with no retries unless they are configured (as before)", async () => {
    const hits: Hit[] = [];
    fake = await FakeSlack.start({ mode: "webhook", companionMessages: false });
    fake.eventsUrl = await app("only", hits);
    fake.injectDeliveryFault({ kind: "connection_failed", times: 1 });
    await fake.dm("hello");
    expect(fake.deliveries[0]).toMatchObject({ ok: false, failure: "connection_failed" });
    expect(fake.deliveries).toHaveLength(1);
    expect((await fake.redeliverLast()).ok).toBe(true);
    expect(hits[0]?.headers["x-slack-retry-num"]).toBe("1");
  });
});
