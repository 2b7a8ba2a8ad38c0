import type { StructuredToolInterface } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { CONVERSATION_CONFIG_KEY, type RunConversation } from "../../src/harness/types.js";
import { ScheduleBook } from "../../src/schedules/book.js";
import { SCHEDULE_CANCEL, SCHEDULE_CREATE, SCHEDULES_LIST, scheduleTools } from "../../src/schedules/tools.js";
import { MemorySchedules } from "../helpers/memory-schedules.js";

const NOW = Date.parse("2026-12-03T14:03:00Z");

function setup() {
  let now = NOW;
  const clock = () => now;
  const stores = new Map<string, MemorySchedules>();
  const bookFor = (tenant: string) => {
    const store = stores.get(tenant) ?? new MemorySchedules(clock);
    stores.set(tenant, store);
    return new ScheduleBook({ store, clock, limits: { perConversation: 3, perTenant: 100, minIntervalS: 60 } });
  };
  const tools = new Map<string, StructuredToolInterface>(scheduleTools(bookFor, clock).map((t) => [t.name, t]));
  const call = async (name: string, args: Record<string, unknown>, conversation?: RunConversation): Promise<string> => {
    const tool = tools.get(name);
    if (!tool) throw new Error(`no tool ${name}`);
    const config = { configurable: conversation ? { [CONVERSATION_CONFIG_KEY]: conversation } : {} };
    return String(await tool.invoke(args, config));
  };
  return { call, stores, advance: (ms: number) => (now += ms) };
}

const alice: RunConversation = { tenant: "default", channel: "tg", key: "tg:chat:1", user: { id: "u1", name: "Alice" } };
const bob: RunConversation = { tenant: "default", channel: "tg", key: "tg:chat:2", user: { id: "u2" } };

describe("schedule tools", () => {
  it("schedules a reminder in 2 minutes for the conversation of the run", async () => {
    const { call, stores } = setup();
    const text = await call(SCHEDULE_CREATE, { message: "stretch", in_seconds: 120 }, alice);
    const [made] = await (stores.get("default")?.listSchedules() ?? []);
    expect(made).toMatchObject({
      nextFireAt: NOW + 120_000,
      key: "tg:chat:1",
      target: { key: "tg:chat:1" },
      action: { kind: "send", text: "stretch" },
      createdBy: { id: "u1", name: "Alice" },
    });
    expect(text).toBe(`Scheduled reminder \`${made?.id}\` (remind: stretch): next fire 2026-12-03T14:05:00Z (UTC).`);
  });

  it("schedules a weekday task by cron in a zone, and one at a local time", async () => {
    const { call, stores } = setup();
    const weekly = await call(
      SCHEDULE_CREATE,
      { prompt: "send me the build status", cron: "0 9 * * 1-5", tz: "Asia/Shanghai" },
      alice,
    );
    expect(weekly).toMatch(
      /^Scheduled task `[a-z2-7]{8}` \(run: send me the build status\): next fire 2026-12-04T09:00:00\+08:00 \(Asia\/Shanghai\); repeats: cron `0 9 \* \* 1-5` \(Asia\/Shanghai\)\.$/,
    );
    const once = await call(
      SCHEDULE_CREATE,
      { message: "call mum", at: "2026-12-24T18:30", tz: "Europe/Berlin", name: "mum" },
      alice,
    );
    expect(once).toMatch(/\(mum\): next fire 2026-12-24T18:30:00\+01:00 \(Europe\/Berlin\)\.$/);
    const rows = (await stores.get("default")?.listSchedules()) ?? [];
    expect(rows.map((r) => r.action.kind)).toEqual(["run", "send"]);
    expect(rows[1]?.nextFireAt).toBe(Date.parse("2026-12-24T17:30:00Z"));
  });

  it("answers mistakes and limits in words, without throwing", async () => {
    const { call } = setup();
    expect(await call(SCHEDULE_CREATE, { message: "x", prompt: "y", in_seconds: 5 }, alice)).toBe(
      "Not done: give either message or prompt, not both.",
    );
    expect(await call(SCHEDULE_CREATE, { in_seconds: 5 }, alice)).toMatch(/^Not done: give message/);
    expect(await call(SCHEDULE_CREATE, { message: "x" }, alice)).toBe("Not done: give exactly one of in_seconds, at or cron.");
    expect(await call(SCHEDULE_CREATE, { message: "x", in_seconds: 5, cron: "* * * * *" }, alice)).toMatch(/exactly one/);
    expect(await call(SCHEDULE_CREATE, { message: "x", cron: "0 25 * * *" }, alice)).toMatch(
      /^Not done: bad cron expression `0 25 \* \* \*`/,
    );
    expect(await call(SCHEDULE_CREATE, { message: "x", cron: "*/30 * * * * *" }, alice)).toMatch(
      /fires every 30 s; the shortest interval allowed is 1 min/,
    );
    expect(await call(SCHEDULE_CREATE, { message: "x", at: "2026-01-01T10:00" }, alice)).toMatch(/is in the past/);
    expect(await call(SCHEDULE_CREATE, { message: "x", in_seconds: 60, tz: "Moon/Base" }, alice)).toMatch(
      /unknown time zone "Moon\/Base"/,
    );
    for (let i = 0; i < 3; i++) await call(SCHEDULE_CREATE, { message: `r${i}`, in_seconds: 60 }, alice);
    expect(await call(SCHEDULE_CREATE, { message: "one more", in_seconds: 60 }, alice)).toMatch(
      /^Not done: this conversation already has 3 schedules/,
    );
  });

  it("lists and cancels only the run's own conversation's schedules", async () => {
    const { call } = setup();
    await call(SCHEDULE_CREATE, { message: "stretch", in_seconds: 120 }, alice);
    const listed = await call(SCHEDULES_LIST, {}, alice);
    const id = /`([a-z2-7]{8})`/.exec(listed)?.[1] ?? "";
    expect(listed).toContain(`1. \`${id}\` — remind: stretch — next 2026-12-03 14:05 UTC`);
    expect(await call(SCHEDULES_LIST, {}, bob)).toMatch(/^No schedules/);
    expect(await call(SCHEDULE_CANCEL, { id }, bob)).toBe(`Not cancelled: no schedule \`${id}\` in this conversation.`);
    expect(await call(SCHEDULE_CANCEL, { id: "1" }, alice)).toBe(`Cancelled \`${id}\` — remind: stretch.`);
    expect(await call(SCHEDULES_LIST, {}, alice)).toMatch(/^No schedules/);
  });

  it("keeps tenants apart", async () => {
    const { call } = setup();
    await call(SCHEDULE_CREATE, { message: "stretch", in_seconds: 120 }, alice);
    expect(await call(SCHEDULES_LIST, {}, { ...alice, tenant: "acme" })).toMatch(/^No schedules/);
  });

  it("says schedules need a chat when the run serves none", async () => {
    const { call } = setup();
    for (const name of [SCHEDULE_CREATE, SCHEDULES_LIST, SCHEDULE_CANCEL]) {
      expect(await call(name, name === SCHEDULE_CANCEL ? { id: "x" } : { message: "x", in_seconds: 5 })).toBe(
        "Schedules can only be made from a chat conversation; this run serves none.",
      );
    }
  });

  it("measures in_seconds from the clock at the call", async () => {
    const { call, stores, advance } = setup();
    advance(30_000);
    await call(SCHEDULE_CREATE, { message: "later", in_seconds: 120 }, alice);
    expect((await stores.get("default")?.listSchedules())?.[0]?.nextFireAt).toBe(NOW + 150_000);
  });
});
