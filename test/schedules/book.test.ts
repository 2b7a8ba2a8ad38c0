import { describe, expect, it } from "vitest";
import type { NewSchedule } from "../../src/bindings/schedules.js";
import { randomScheduleId, ScheduleBook, type ScheduleLimits } from "../../src/schedules/book.js";
import { ScheduleError } from "../../src/schedules/errors.js";
import { MemorySchedules } from "../helpers/memory-schedules.js";

const NOW = Date.parse("2026-12-03T14:00:00Z");
const alice = { id: "u-alice", name: "Alice" };
const here = { channel: "tg", key: "tg:chat:1" };
const there = { channel: "tg", key: "tg:chat:2" };

function setup(limits: Partial<ScheduleLimits> = {}) {
  const store = new MemorySchedules(() => NOW);
  const book = new ScheduleBook({
    store,
    clock: () => NOW,
    limits: { perConversation: 10, perTenant: 500, minIntervalS: 60, ...limits },
  });
  return { store, book };
}

const remind = (conversation = here, inSeconds = 120) => ({
  conversation,
  user: alice,
  timing: { at: NOW + inSeconds * 1000, tz: "UTC" },
  action: { kind: "send" as const, text: "stretch" },
});

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ScheduleError);
    return `${(err as ScheduleError).code}: ${(err as Error).message}`;
  }
  return "accepted";
}

const configJob = (key: string): NewSchedule => ({
  id: "cfg:standup",
  origin: "config",
  name: "standup",
  channel: "tg",
  key,
  target: { chat: "1" },
  timing: { cron: "0 9 * * 1-5", tz: "Europe/Berlin" },
  action: { kind: "send", text: "Standup!" },
  thread: "conversation",
  state: "active",
  nextFireAt: NOW + 3_600_000,
});

describe("ScheduleBook.create", () => {
  it("stores a reminder aimed at the conversation, with its next fire", async () => {
    const { book, store } = setup();
    const made = await book.create(remind());
    expect(made).toMatchObject({
      origin: "agent",
      name: "remind: stretch",
      channel: "tg",
      key: "tg:chat:1",
      target: { key: "tg:chat:1" },
      thread: "conversation",
      createdBy: alice,
      state: "active",
      nextFireAt: NOW + 120_000,
      fires: 0,
    });
    expect(made.id).toMatch(/^[a-z2-7]{8}$/);
    expect(await store.getSchedule(made.id)).toEqual(made);
  });

  it("computes a cron's next fire in its zone", async () => {
    const { book } = setup();
    const made = await book.create({
      conversation: here,
      timing: { cron: "0 9 * * 1-5", tz: "Europe/Berlin" },
      action: { kind: "run", prompt: "send me the build status" },
      name: "build status",
    });
    // Thursday 3 Dec 2026, 15:00 in Berlin: next is Friday 09:00 CET.
    expect(made.nextFireAt).toBe(Date.parse("2026-12-04T08:00:00Z"));
    expect(made.name).toBe("build status");
  });

  it("keeps the per-conversation limit; config jobs and done one-shots do not count", async () => {
    const { book, store } = setup({ perConversation: 2 });
    await store.putSchedule(configJob(here.key));
    const first = await book.create(remind());
    await book.create(remind());
    expect(await refusal(book.create(remind()))).toBe(
      "schedule_limit: this conversation already has 2 schedules (the most allowed is 2): cancel one first",
    );
    await store.updateSchedule(first.id, { state: "done", nextFireAt: null });
    expect(await refusal(book.create(remind()))).toBe("accepted");
    expect(await refusal(book.create(remind(there)))).toBe("accepted");
  });

  it("keeps the per-tenant limit across conversations", async () => {
    const { book } = setup({ perTenant: 2 });
    await book.create(remind(here));
    await book.create(remind(there));
    expect(await refusal(book.create(remind({ channel: "tg", key: "tg:chat:3" })))).toMatch(
      /^schedule_limit: this gateway already has 2 schedules \(the most allowed is 2\)/,
    );
  });

  it("refuses a cron that fires more often than min_interval_s", async () => {
    const { book } = setup({ minIntervalS: 300 });
    const every = (cron: string) =>
      book.create({ conversation: here, timing: { cron, tz: "UTC" }, action: { kind: "send", text: "x" } });
    expect(await refusal(every("* * * * *"))).toBe(
      "schedule_limit: `* * * * *` fires every 1 min; the shortest interval allowed is 5 min",
    );
    expect(await refusal(every("*/10 * * * * *"))).toMatch(/fires every 10 s/);
    // Two fires a minute apart once a day still breaks the limit.
    expect(await refusal(every("0,1 9 * * *"))).toMatch(/fires every 1 min/);
    expect(await refusal(every("*/5 * * * *"))).toBe("accepted");
  });

  it("refuses bad timings and empty actions", async () => {
    const { book } = setup();
    expect(await refusal(book.create(remind(here, -5)))).toMatch(/^schedule_invalid: .* is in the past/);
    expect(
      await refusal(
        book.create({ conversation: here, timing: { cron: "nope", tz: "UTC" }, action: { kind: "send", text: "x" } }),
      ),
    ).toMatch(/^schedule_invalid: bad cron expression `nope`/);
    expect(await refusal(book.create({ ...remind(), action: { kind: "send", text: "  " } }))).toBe(
      "schedule_invalid: the reminder text is empty",
    );
  });

  it("draws another id when the first is taken", async () => {
    const ids = ["aaaaaaaa", "aaaaaaaa", "bbbbbbbb"];
    const store = new MemorySchedules(() => NOW);
    const book = new ScheduleBook({
      store,
      clock: () => NOW,
      limits: { perConversation: 10, perTenant: 10, minIntervalS: 60 },
      newId: () => ids.shift() ?? "zzzzzzzz",
    });
    expect((await book.create(remind())).id).toBe("aaaaaaaa");
    expect((await book.create(remind())).id).toBe("bbbbbbbb");
  });

  it("makes short random ids", () => {
    const ids = new Set(Array.from({ length: 200 }, randomScheduleId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[a-z2-7]{8}$/);
  });
});

describe("ScheduleBook.list and cancel", () => {
  it("shows a conversation only its own schedules, config ones aimed at it included", async () => {
    const { book, store } = setup();
    const mine = await book.create(remind(here));
    await book.create(remind(there));
    await store.putSchedule(configJob(here.key));
    expect((await book.list(here.key)).map((s) => s.id)).toEqual([mine.id, "cfg:standup"]);
    expect(await book.list("tg:chat:9")).toEqual([]);
  });

  it("cancels by id or by number", async () => {
    const { book, store } = setup();
    const a = await book.create(remind());
    const b = await book.create(remind());
    expect(await book.cancel(here.key, 2, alice)).toMatchObject({ ok: true, schedule: { id: b.id }, by: alice });
    expect(await book.cancel(here.key, `\`${a.id}\``)).toMatchObject({ ok: true, schedule: { id: a.id } });
    expect(store.rows.size).toBe(0);
  });

  it("does not let another conversation cancel, or confirm the id exists", async () => {
    const { book, store } = setup();
    const theirs = await book.create(remind(there));
    expect(await book.cancel(here.key, theirs.id, alice)).toEqual({
      ok: false,
      code: "schedule_not_found",
      reason: `no schedule \`${theirs.id}\` in this conversation`,
    });
    expect(await book.cancel(here.key, 1)).toMatchObject({ ok: false, reason: "no schedule number 1 in this conversation" });
    expect(await store.getSchedule(theirs.id)).toBeDefined();
  });

  it("leaves config schedules to the operator", async () => {
    const { book, store } = setup();
    await store.putSchedule(configJob(here.key));
    const outcome = await book.cancel(here.key, "cfg:standup", alice);
    expect(outcome).toMatchObject({ ok: false, code: "schedule_forbidden" });
    expect(outcome.ok ? "" : outcome.reason).toMatch(/only its operator can remove it/);
    expect(await store.getSchedule("cfg:standup")).toBeDefined();
  });
});
