import { describe, expect, it } from "vitest";
import type { Schedule } from "../../src/bindings/schedules.js";
import { formatCancel, formatScheduleList, scheduleLine } from "../../src/schedules/format.js";

const base: Schedule = {
  id: "k3x9pq2a",
  origin: "agent",
  name: "remind: stretch",
  channel: "tg",
  key: "tg:chat:1",
  target: { key: "tg:chat:1" },
  timing: { at: Date.parse("2026-12-03T14:05:00Z"), tz: "UTC" },
  action: { kind: "send", text: "stretch" },
  thread: "conversation",
  state: "active",
  nextFireAt: Date.parse("2026-12-03T14:05:00Z"),
  fires: 0,
  missed: 0,
  skipped: 0,
  createdAt: 0,
  updatedAt: 0,
};

const weekly: Schedule = {
  ...base,
  id: "cfg:standup",
  origin: "config",
  name: "standup",
  timing: { cron: "0 9 * * 1-5", tz: "Europe/Berlin" },
  nextFireAt: Date.parse("2026-12-04T08:00:00Z"),
};

describe("schedule text", () => {
  it("lists schedules numbered, with id, name and the next fire on their own clock", () => {
    expect(formatScheduleList([base, weekly])).toBe(
      [
        "Schedules in this conversation:",
        "1. `k3x9pq2a` — remind: stretch — next 2026-12-03 14:05 UTC",
        "2. `cfg:standup` — standup (set by the operator) — next 2026-12-04 09:00 Europe/Berlin, cron `0 9 * * 1-5`",
        "",
        "Cancel one with `/schedules cancel <number or id>`.",
      ].join("\n"),
    );
  });

  it("says when there are none", () => {
    expect(formatScheduleList([])).toMatch(/^No schedules in this conversation\./);
  });

  it("shows paused and disabled ones, and keeps a name on one line", () => {
    expect(scheduleLine({ ...base, state: "paused" })).toBe("`k3x9pq2a` — remind: stretch — paused");
    expect(scheduleLine({ ...base, state: "disabled", reason: "chat is gone", name: "a `b`\nc" })).toBe(
      "`k3x9pq2a` — a 'b' c — disabled (chat is gone)",
    );
  });

  it("confirms a cancel or says why not", () => {
    expect(formatCancel({ ok: true, schedule: base })).toBe("Cancelled `k3x9pq2a` — remind: stretch.");
    expect(formatCancel({ ok: false, code: "schedule_not_found", reason: "no schedule number 4 in this conversation" })).toBe(
      "Not cancelled: no schedule number 4 in this conversation.",
    );
  });
});
