/**
 * The binding-store contract's schedules part (src/bindings/schedules.ts): storing and changing
 * schedules, which are due, and the fire: a compare-and-set on the due time that queues its outbox
 * entry in the same step. `fireRace` is also run by the replica part, with stores of several
 * replicas.
 */
import { expect, it } from "vitest";
import type { NewSchedule } from "../../bindings/schedules.js";
import type { BindingStore } from "../../bindings/types.js";
import { outboxEntry, type Subject } from "./outbox.js";

/** A cron schedule `id` of conversation `key`, next due at `nextFireAt`. */
export function scheduleOf(id: string, nextFireAt: number, more: Partial<NewSchedule> = {}): NewSchedule {
  return {
    id,
    origin: "api",
    name: `schedule ${id}`,
    channel: "tg",
    key: "tg:w:1",
    target: { ref: { chatId: "1" } },
    timing: { cron: "0 9 * * *", tz: "Europe/Berlin" },
    action: { kind: "send", text: "Good morning\u0000!" },
    thread: "fresh",
    state: "active",
    nextFireAt,
    ...more,
  };
}

const ids = (schedules: Array<{ id: string }>) => schedules.map((x) => x.id);

export function schedulesPart(s: Subject): void {
  storingPart(s);
  firingPart(s);
}

/** Storing, changing and listing schedules, and which are due. */
function storingPart(s: Subject): void {
  it("stores, lists, changes and deletes schedules", async () => {
    const made = await s.store.putSchedule(
      scheduleOf("s1", s.now + 100, { agent: "support", createdBy: { id: "u1", name: "Alice" }, origin: "agent" }),
    );
    expect(made).toEqual({
      ...scheduleOf("s1", s.now + 100, { agent: "support", createdBy: { id: "u1", name: "Alice" }, origin: "agent" }),
      fires: 0,
      missed: 0,
      skipped: 0,
      createdAt: s.now,
      updatedAt: s.now,
    });
    expect(await s.store.getSchedule("s1")).toEqual(made);
    s.now += 1;
    await s.store.putSchedule(scheduleOf("s2", s.now, { channel: "slack", timing: { at: s.now, tz: "UTC" } }));
    await s.store.putSchedule(scheduleOf("s3", s.now, { key: "tg:w:2", state: "paused" }));
    expect(ids(await s.store.listSchedules())).toEqual(["s1", "s2", "s3"]);
    expect(ids(await s.store.listSchedules({ channel: "tg" }))).toEqual(["s1", "s3"]);
    expect(ids(await s.store.listSchedules({ key: "tg:w:2" }))).toEqual(["s3"]);
    expect(ids(await s.store.listSchedules({ state: "active", channel: "tg" }))).toEqual(["s1"]);
    s.now += 1;
    const changed = await s.store.updateSchedule("s1", {
      state: "disabled",
      reason: "target_unreachable",
      agent: null,
      action: { kind: "run", prompt: "Summarize the news" },
      nextFireAt: null,
    });
    expect(changed).toMatchObject({ state: "disabled", reason: "target_unreachable", action: { kind: "run" }, updatedAt: s.now });
    expect(changed?.agent).toBeUndefined();
    expect(changed?.nextFireAt).toBeUndefined();
    expect(changed?.createdBy).toEqual({ id: "u1", name: "Alice" });
    expect(await s.store.getSchedule("s1")).toEqual(changed);
    expect(await s.store.updateSchedule("nope", { state: "paused" })).toBeUndefined();
    expect(await s.store.deleteSchedule("s2")).toBe(true);
    expect(await s.store.deleteSchedule("s2")).toBe(false);
    expect(ids(await s.store.listSchedules())).toEqual(["s1", "s3"]);
  });

  it("replaces a schedule by id, keeping its counters, last fire and creation time", async () => {
    const created = s.now;
    await s.store.putSchedule(scheduleOf("s1", s.now));
    await s.store.fireSchedule("s1", { dueAt: s.now, nextFireAt: s.now + 60, result: "missed" });
    s.now += 5;
    const replaced = await s.store.putSchedule(scheduleOf("s1", s.now + 500, { name: "renamed" }));
    expect(replaced).toMatchObject({ name: "renamed", nextFireAt: s.now + 500, missed: 1, fires: 0, lastFireAt: created });
    expect(replaced).toMatchObject({ lastResult: "missed", createdAt: created, updatedAt: s.now });
    expect(await s.store.listSchedules()).toHaveLength(1);
  });

  it("finds the active schedules of the given channels that are due, earliest first", async () => {
    await s.store.putSchedule(scheduleOf("late", s.now + 10));
    await s.store.putSchedule(scheduleOf("early", s.now - 10));
    await s.store.putSchedule(scheduleOf("now", s.now));
    await s.store.putSchedule(scheduleOf("future", s.now + 11));
    await s.store.putSchedule(scheduleOf("paused", s.now - 20, { state: "paused" }));
    await s.store.putSchedule(scheduleOf("slack", s.now - 30, { channel: "slack" }));
    await s.store.forTenant("other").putSchedule(scheduleOf("theirs", s.now - 40));
    expect(ids(await s.store.dueSchedules(["tg"], s.now + 10, 10))).toEqual(["early", "now", "late"]);
    expect(ids(await s.store.dueSchedules(["tg", "slack"], s.now, 2))).toEqual(["slack", "early"]);
    expect(await s.store.dueSchedules([], s.now, 10)).toEqual([]);
  });
}

/** Fires: one per due time, with its outbox entry. */
function firingPart(s: Subject): void {
  it("fires a due time once, moving it on and queuing the fire's outbox entry in the same step", async () => {
    const due = s.now;
    await s.store.putSchedule(scheduleOf("s1", due));
    const outbox = outboxEntry("f1", "tg:w:1", "tg", { source: "schedule:s1" });
    // Another due time than the stored one changes nothing.
    expect(await s.store.fireSchedule("s1", { dueAt: due - 1, nextFireAt: due + 60, result: "fired", outbox })).toBeUndefined();
    expect(await s.store.getOutbound("f1")).toBeUndefined();
    s.now += 3;
    const fired = await s.store.fireSchedule("s1", { dueAt: due, nextFireAt: due + 60, result: "fired", outbox });
    expect(fired?.schedule).toMatchObject({
      state: "active",
      nextFireAt: due + 60,
      fires: 1,
      lastFireAt: due,
      lastResult: "fired",
      lastOutboxId: "f1",
      updatedAt: s.now,
    });
    expect(fired?.outbox).toMatchObject({ id: "f1", state: "queued", source: "schedule:s1" });
    expect(await s.store.getSchedule("s1")).toEqual(fired?.schedule);
    // The same due time again: already recorded.
    const again = { dueAt: due, nextFireAt: due + 60, result: "fired" as const, outbox: outboxEntry("f2") };
    expect(await s.store.fireSchedule("s1", again)).toBeUndefined();
    expect(await s.store.getOutbound("f2")).toBeUndefined();
    // Skipped and missed due times count, queue nothing, and keep the last outbox id.
    await s.store.fireSchedule("s1", { dueAt: due + 60, nextFireAt: due + 120, result: "skipped" });
    const missed = await s.store.fireSchedule("s1", { dueAt: due + 120, nextFireAt: due + 180, result: "missed" });
    expect(missed?.outbox).toBeUndefined();
    expect(missed?.schedule).toMatchObject({ fires: 1, skipped: 1, missed: 1, lastResult: "missed", lastOutboxId: "f1" });
    expect(ids(await s.store.listOutbound())).toEqual(["f1"]);
  });

  it("ends a schedule with no next due time, and fires neither a paused nor another tenant's schedule", async () => {
    await s.store.putSchedule(scheduleOf("once", s.now, { timing: { at: s.now, tz: "UTC" } }));
    await s.store.putSchedule(scheduleOf("paused", s.now, { state: "paused" }));
    const fire = { dueAt: s.now, nextFireAt: undefined, result: "fired" as const };
    expect(await s.store.forTenant("other").fireSchedule("once", fire)).toBeUndefined();
    expect(await s.store.fireSchedule("paused", fire)).toBeUndefined();
    expect(await s.store.fireSchedule("missing", fire)).toBeUndefined();
    const done = await s.store.fireSchedule("once", fire);
    expect(done?.schedule).toMatchObject({ state: "done", fires: 1 });
    expect(done?.schedule.nextFireAt).toBeUndefined();
    expect(await s.store.dueSchedules(["tg"], s.now + 1_000, 10)).toEqual([]);
    expect(await s.store.forTenant("other").getSchedule("once")).toBeUndefined();
    expect(await s.store.forTenant("other").listSchedules()).toEqual([]);
    expect(await s.store.forTenant("other").deleteSchedule("once")).toBe(false);
  });

  it("finds the entry already queued under the fire's idempotency key", async () => {
    const queued = await s.store.enqueueOutbound(outboxEntry("first", "tg:w:1", "tg", { idempotencyKey: "schedule:s1:1000" }));
    await s.store.putSchedule(scheduleOf("s1", s.now));
    const outbox = outboxEntry("second", "tg:w:1", "tg", { idempotencyKey: "schedule:s1:1000" });
    const fired = await s.store.fireSchedule("s1", { dueAt: s.now, nextFireAt: s.now + 1, result: "fired", outbox });
    expect(fired?.outbox).toEqual(queued.entry);
    expect(fired?.schedule.lastOutboxId).toBe("first");
    expect(ids(await s.store.listOutbound())).toEqual(["first"]);
  });

  it("records one fire of a due time however many ask at once", async () => {
    await fireRace(s.now, [s.store, s.store, s.store, s.store, s.store]);
  });
}

/** Each store fires the same due time at once: exactly one fire is recorded and one entry queued. */
export async function fireRace(now: number, stores: BindingStore[]): Promise<void> {
  const [first] = stores;
  if (!first) throw new Error("fireRace needs a store");
  await first.putSchedule(scheduleOf("race", now));
  const results = await Promise.all(
    stores.map((store, i) =>
      store.fireSchedule("race", {
        dueAt: now,
        nextFireAt: now + 60_000,
        result: "fired",
        outbox: outboxEntry(`fire-${i}`, "tg:w:1", "tg", { idempotencyKey: `schedule:race:${now}` }),
      }),
    ),
  );
  const won = results.filter((r) => r !== undefined);
  expect(won).toHaveLength(1);
  expect(await first.getSchedule("race")).toMatchObject({ fires: 1, nextFireAt: now + 60_000, lastOutboxId: won[0]?.outbox?.id });
  expect(await first.listOutbound({ source: "api" })).toHaveLength(1);
}
