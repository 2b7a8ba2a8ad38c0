import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/loader.js";
import { configSchedule, scheduleLimits } from "../../src/schedules/from-config.js";

const NOW = Date.parse("2026-12-03T14:00:00Z");

const config = parseConfig(
  [
    "channels:",
    "  slack:",
    "    enabled: false",
    "schedules:",
    "  max_per_tenant: 50",
    "  jobs:",
    "    standup:",
    '      cron: "0 9 * * 1-5"',
    "      tz: Europe/Berlin",
    "      channel: slack",
    "      target: { chat: C1 }",
    "      message: Stand-up!",
    "    report:",
    '      at: "2026-12-04T10:00"',
    "      tz: Asia/Shanghai",
    "      channel: slack",
    "      target: { chat: C1 }",
    "      prompt: Summarize the builds",
    "      thread: fresh",
    "    old:",
    '      at: "2026-01-01T10:00"',
    "      channel: slack",
    "      target: { chat: C1 }",
    "      message: gone",
    "      enabled: false",
    "",
  ].join("\n"),
  {},
);
const where = { target: { chat: "C1" }, key: "slack:C1", after: NOW };

describe("config jobs as schedules", () => {
  it("turns a cron job into an active config schedule with its next fire", () => {
    const job = config.schedules.jobs.standup;
    if (!job) throw new Error("no job");
    expect(configSchedule("standup", job, where)).toEqual({
      id: "cfg:standup",
      origin: "config",
      name: "standup",
      channel: "slack",
      key: "slack:C1",
      target: { chat: "C1" },
      timing: { cron: "0 9 * * 1-5", tz: "Europe/Berlin" },
      action: { kind: "send", text: "Stand-up!" },
      thread: "conversation",
      state: "active",
      nextFireAt: Date.parse("2026-12-04T08:00:00Z"),
    });
  });

  it("reads a one-shot on its zone's clock, and marks a passed or disabled one", () => {
    const report = config.schedules.jobs.report;
    const old = config.schedules.jobs.old;
    if (!report || !old) throw new Error("no job");
    expect(configSchedule("report", report, where)).toMatchObject({
      timing: { at: Date.parse("2026-12-04T02:00:00Z"), tz: "Asia/Shanghai" },
      action: { kind: "run", prompt: "Summarize the builds" },
      thread: "fresh",
      state: "active",
      nextFireAt: Date.parse("2026-12-04T02:00:00Z"),
    });
    const passed = configSchedule("old", { ...old, enabled: true }, where);
    expect(passed.state).toBe("done");
    expect(passed.nextFireAt).toBeUndefined();
    expect(configSchedule("old", old, where).state).toBe("paused");
  });

  it("maps the section's limits for the book", () => {
    expect(scheduleLimits(config.schedules)).toEqual({ perConversation: 10, perTenant: 50, minIntervalS: 60 });
  });
});
