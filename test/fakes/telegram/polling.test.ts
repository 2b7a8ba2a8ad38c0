/** The fake's getUpdates with several bot processes: one open poll per bot, the older one gets 409. */
import { afterEach, describe, expect, it } from "vitest";
import { CONFLICT_DESCRIPTION, FakeTelegram } from "./index.js";

const alice = { id: 1001, first_name: "Alice", username: "alice" };

let fake: FakeTelegram;
afterEach(async () => {
  await fake?.close();
});

async function getUpdates(root: string, token: string, params: Record<string, unknown>, signal?: AbortSignal) {
  const res = await fetch(`${root}/bot${token}/getUpdates`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(params),
    ...(signal ? { signal } : {}),
  });
  return {
    status: res.status,
    body: (await res.json()) as { ok: boolean; result?: Array<{ update_id: number }>; description?: string },
  };
}

describe("fake Telegram getUpdates with several pollers", () => {
  it("ends the older open poll with 409 and serves the newer one", async () => {
    fake = await FakeTelegram.start();
    const [a, b] = [await fake.listenFor("a"), await fake.listenFor("b")];
    const older = getUpdates(a, fake.token, { timeout: 5 });
    await new Promise((r) => setTimeout(r, 100));
    const newer = getUpdates(b, fake.token, { timeout: 5 });
    const first = await older;
    expect(first.status).toBe(409);
    expect(first.body).toMatchObject({ ok: false, error_code: 409, description: CONFLICT_DESCRIPTION });
    const update = fake.dm(alice, "hello");
    const second = await newer;
    expect(second.status).toBe(200);
    expect(second.body.result?.map((u) => u.update_id)).toEqual([update.update_id]);
    expect(fake.conflicts).toEqual([expect.objectContaining({ terminated: "a", by: "b" })]);
    const polls = fake.calls.filter((c) => c.method === "getUpdates");
    expect(polls.map((c) => [c.client, c.status])).toEqual([
      ["a", 409],
      ["b", 200],
    ]);
  });

  it("counts no conflict for one poller, nor for a poll whose client went away", async () => {
    fake = await FakeTelegram.start();
    const first = fake.dm(alice, "one");
    const got = await getUpdates(fake.apiRoot, fake.token, { timeout: 1 });
    expect(got.body.result?.map((u) => u.update_id)).toEqual([first.update_id]);
    // A process that died mid-poll: its connection is gone, so the next poll meets nobody.
    const abort = new AbortController();
    const dead = getUpdates(await fake.listenFor("dead"), fake.token, { offset: first.update_id + 1, timeout: 5 }, abort.signal);
    await new Promise((r) => setTimeout(r, 100));
    abort.abort();
    await dead.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    const next = fake.dm(alice, "two");
    const after = await getUpdates(fake.apiRoot, fake.token, { offset: first.update_id + 1, timeout: 1 });
    expect(after.body.result?.map((u) => u.update_id)).toEqual([next.update_id]);
    expect(fake.conflicts).toEqual([]);
  });
});
