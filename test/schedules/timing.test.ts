import { describe, expect, it } from "vitest";
import { ScheduleError } from "../../src/schedules/errors.js";
import {
  checkTiming,
  describeTiming,
  formatLocal,
  isoInZone,
  nextFireAfter,
  nextFires,
  parseLocalTime,
  shortestGap,
} from "../../src/schedules/timing.js";

const at = (iso: string) => Date.parse(iso);

describe("nextFireAfter", () => {
  it("fires a weekday cron at 09:00 Berlin time on both sides of the spring change", () => {
    const timing = { cron: "0 9 * * 1-5", tz: "Europe/Berlin" };
    // Friday 27 March 2026 is still winter time (UTC+1); Monday 30 March is summer time (UTC+2).
    expect(nextFireAfter(timing, at("2026-03-27T07:00:00Z"))).toBe(at("2026-03-27T08:00:00Z"));
    expect(nextFireAfter(timing, at("2026-03-27T08:00:00Z"))).toBe(at("2026-03-30T07:00:00Z"));
  });

  it("fires 02:30 daily in New York through the autumn change without skipping or doubling a day", () => {
    const fires = nextFires({ cron: "30 2 * * *", tz: "America/New_York" }, at("2026-10-31T12:00:00Z"), 3);
    expect(fires.map((ms) => formatLocal(ms, "America/New_York"))).toEqual([
      "2026-11-01 02:30",
      "2026-11-02 02:30",
      "2026-11-03 02:30",
    ]);
    // EDT (UTC-4) then EST (UTC-5).
    expect(new Date(fires[1] ?? 0).toISOString()).toBe("2026-11-02T07:30:00.000Z");
  });

  it("fires once in the autumn's repeated hour, at its first pass", () => {
    const fires = nextFires({ cron: "30 1 * * *", tz: "America/New_York" }, at("2026-10-31T12:00:00Z"), 2);
    // 01:30 comes twice on 1 Nov (EDT, then EST): the first one only.
    expect(fires.map((ms) => new Date(ms).toISOString())).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
  });

  it("moves a time inside the spring gap to after it", () => {
    expect(nextFireAfter({ cron: "30 2 * * *", tz: "Europe/Berlin" }, at("2026-03-28T12:00:00Z"))).toBe(
      at("2026-03-29T01:30:00Z"),
    );
  });

  it("accepts a 6-field cron with seconds", () => {
    const timing = { cron: "*/15 * * * * *", tz: "UTC" };
    expect(nextFireAfter(timing, at("2026-12-03T14:00:07Z"))).toBe(at("2026-12-03T14:00:15Z"));
    expect(shortestGap(timing, at("2026-12-03T14:00:07Z"))).toBe(15_000);
  });

  it("gives a one-shot's time only while it is ahead", () => {
    const timing = { at: at("2026-12-04T02:00:00Z"), tz: "Asia/Shanghai" };
    expect(nextFireAfter(timing, at("2026-12-04T01:59:59Z"))).toBe(timing.at);
    expect(nextFireAfter(timing, timing.at)).toBeUndefined();
    expect(shortestGap(timing, 0)).toBeUndefined();
  });
});

describe("checkTiming", () => {
  const now = at("2026-12-03T14:00:00Z");
  const reason = (timing: Parameters<typeof checkTiming>[0]) => {
    try {
      checkTiming(timing, now);
    } catch (err) {
      expect(err).toBeInstanceOf(ScheduleError);
      return (err as Error).message;
    }
    return "accepted";
  };

  it("accepts good timings", () => {
    expect(reason({ cron: "0 9 * * 1-5", tz: "Europe/Berlin" })).toBe("accepted");
    expect(reason({ at: now + 1000, tz: "UTC" })).toBe("accepted");
  });

  it("names a bad cron, an unknown zone, a cron that never fires, and a past one-shot", () => {
    expect(reason({ cron: "61 * * * *", tz: "UTC" })).toMatch(/^bad cron expression `61 \* \* \* \*`: .*minute/);
    expect(reason({ cron: "* * * *", tz: "UTC" })).toMatch(/^bad cron expression/);
    expect(reason({ cron: "0 0 0 1 1 * 2030", tz: "UTC" })).toMatch(/^bad cron expression/);
    expect(reason({ cron: "0 9 * * *", tz: "Mars/Olympus" })).toBe(
      'unknown time zone "Mars/Olympus": use an IANA name such as Europe/Berlin or UTC',
    );
    expect(reason({ cron: "0 0 31 2 *", tz: "UTC" })).toBe("cron expression `0 0 31 2 *` never fires (no such date)");
    expect(reason({ at: now, tz: "UTC" })).toBe("2026-12-03 14:00 (UTC) is in the past: pick a later time");
  });
});

describe("local times", () => {
  it("reads an ISO local time on the zone's wall clock, or with its own offset", () => {
    expect(parseLocalTime("2026-12-04T10:00", "Asia/Shanghai")).toBe(at("2026-12-04T02:00:00Z"));
    expect(parseLocalTime("2026-12-04 10:00:30", "Europe/Berlin")).toBe(at("2026-12-04T09:00:30Z"));
    expect(parseLocalTime("2026-12-04T10:00:00Z", "Asia/Shanghai")).toBe(at("2026-12-04T10:00:00Z"));
    expect(parseLocalTime("2026-12-04T10:00:00+02:00", "UTC")).toBe(at("2026-12-04T08:00:00Z"));
  });

  it("refuses what is no time", () => {
    expect(() => parseLocalTime("tomorrow", "UTC")).toThrow(/"tomorrow" is not an ISO 8601 time/);
    expect(() => parseLocalTime("2026-02-30T10:00", "UTC")).toThrow(/not an ISO 8601 time/);
    expect(() => parseLocalTime("2026-12-04T10:00", "Nowhere/City")).toThrow(/unknown time zone/);
  });

  it("writes ISO with the zone's offset, and a short text", () => {
    const ms = at("2026-12-04T02:00:00Z");
    expect(isoInZone(ms, "Asia/Shanghai")).toBe("2026-12-04T10:00:00+08:00");
    expect(isoInZone(ms, "UTC")).toBe("2026-12-04T02:00:00Z");
    expect(isoInZone(at("2026-07-01T12:00:00Z"), "America/St_Johns")).toBe("2026-07-01T09:30:00-02:30");
    expect(describeTiming({ at: ms, tz: "Asia/Shanghai" })).toBe("once at 2026-12-04 10:00 (Asia/Shanghai)");
    expect(describeTiming({ cron: "0 9 * * 1-5", tz: "Europe/Berlin" })).toBe("cron `0 9 * * 1-5` (Europe/Berlin)");
  });
});
