import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../src/config/loader.js";
import { ROOT } from "./helpers/cli.js";
import { configIssues } from "./helpers/config.js";

const CHANNELS = "channels:\n  slack:\n    enabled: false\n  tg:\n    enabled: false\n    use: telegram\n";

/** A config with the two channels above and `jobs` (YAML lines under schedules.jobs, indented 4). */
const withJobs = (jobs: string, extra = "") => `${CHANNELS}${extra}schedules:\n  jobs:\n${jobs}`;

describe("schedules: config", () => {
  it("has every default when the section is absent", () => {
    expect(parseConfig("", {}).schedules).toEqual({
      grace_ms: 300_000,
      max_per_conversation: 10,
      max_per_tenant: 500,
      min_interval_s: 60,
      jobs: {},
    });
  });

  it("reads limits from ${VAR} strings", () => {
    const config = parseConfig("schedules:\n  grace_ms: ${GRACE}\n  min_interval_s: ${MIN}\n", { GRACE: "1000", MIN: "300" });
    expect(config.schedules.grace_ms).toBe(1000);
    expect(config.schedules.min_interval_s).toBe(300);
  });

  it("reads a cron job and a one-shot job with their defaults", () => {
    const config = parseConfig(
      withJobs(
        [
          "    standup:",
          '      cron: "0 9 * * 1-5"',
          "      tz: Europe/Berlin",
          "      channel: slack",
          "      target: { chat: C0123, thread: '1700000000.000100' }",
          '      message: "Stand-up in 5 minutes"',
          "    report:",
          '      at: "2026-12-04T10:00"',
          "      channel: tg",
          "      target: { chat: -1001234567890 }",
          "      prompt: Summarize the builds",
          "      thread: fresh",
          "      enabled: ${REPORT_ON}",
          "    dm:",
          '      cron: "*/10 * * * * *"',
          "      channel: slack",
          "      target: { user: U0456, workspace: T01 }",
          "      message: hi",
        ].join("\n"),
      ),
      { REPORT_ON: "false" },
    );
    expect(config.schedules.jobs).toEqual({
      standup: {
        cron: "0 9 * * 1-5",
        tz: "Europe/Berlin",
        channel: "slack",
        target: { chat: "C0123", thread: "1700000000.000100" },
        message: "Stand-up in 5 minutes",
        thread: "conversation",
        enabled: true,
      },
      report: {
        at: "2026-12-04T10:00",
        tz: "UTC",
        channel: "tg",
        target: { chat: "-1001234567890" },
        prompt: "Summarize the builds",
        thread: "fresh",
        enabled: false,
      },
      dm: {
        cron: "*/10 * * * * *",
        tz: "UTC",
        channel: "slack",
        target: { user: "U0456", workspace: "T01" },
        message: "hi",
        thread: "conversation",
        enabled: true,
      },
    });
  });

  it("names a bad cron, an unknown zone, and a time that is none", () => {
    expect(
      configIssues(
        withJobs('    a:\n      cron: "61 * * * *"\n      channel: slack\n      target: { chat: C1 }\n      message: x\n'),
      ),
    ).toEqual([
      "schedules.jobs.a.cron: bad cron expression `61 * * * *`: Invalid value for minute: 61: write 5 fields (minute hour day month weekday), or 6 with seconds first",
    ]);
    expect(
      configIssues(
        withJobs('    a:\n      cron: "0 0 31 2 *"\n      channel: slack\n      target: { chat: C1 }\n      message: x\n'),
      ),
    ).toEqual(["schedules.jobs.a.cron: cron expression `0 0 31 2 *` never fires (no such date): fix it"]);
    expect(
      configIssues(
        withJobs(
          '    a:\n      cron: "0 9 * * *"\n      tz: Europe/Atlantis\n      channel: slack\n      target: { chat: C1 }\n      message: x\n',
        ),
      ),
    ).toEqual(['schedules.jobs.a.tz: unknown time zone "Europe/Atlantis": use an IANA name such as Europe/Berlin or UTC']);
    expect(
      configIssues(
        withJobs("    a:\n      at: next friday\n      channel: slack\n      target: { chat: C1 }\n      message: x\n"),
      ),
    ).toEqual([
      'schedules.jobs.a.at: "next friday" is not an ISO 8601 time: write it like 2026-12-04T10:00 (on the clock of tz)',
    ]);
    expect(
      configIssues(
        withJobs('    a:\n      at: "2026-02-30T10:00"\n      channel: slack\n      target: { chat: C1 }\n      message: x\n'),
      ),
    ).toHaveLength(1);
  });

  it("wants exactly one of cron/at and of message/prompt", () => {
    expect(configIssues(withJobs("    a:\n      channel: slack\n      target: { chat: C1 }\n"))).toEqual([
      "schedules.jobs.a: needs cron (repeating) or at (once), exactly one of them",
      "schedules.jobs.a: needs message (posted as written) or prompt (run by the agent), exactly one of them",
    ]);
    expect(
      configIssues(
        withJobs(
          '    a:\n      cron: "0 9 * * *"\n      at: "2026-12-04T10:00"\n      channel: slack\n      target: { chat: C1 }\n      message: x\n      prompt: y\n',
        ),
      ),
    ).toEqual([
      "schedules.jobs.a: needs cron (repeating) or at (once), exactly one of them",
      "schedules.jobs.a: needs message (posted as written) or prompt (run by the agent), exactly one of them",
    ]);
    expect(
      configIssues(
        withJobs('    a:\n      cron: "0 9 * * *"\n      channel: slack\n      target: { chat: C1 }\n      message: " "\n'),
      ),
    ).toEqual(["schedules.jobs.a.message: is empty: write the text"]);
  });

  it("checks the target's shape", () => {
    const job = (target: string) =>
      withJobs(`    a:\n      cron: "0 9 * * *"\n      channel: slack\n      target: ${target}\n      message: x\n`);
    expect(configIssues(job("{ chat: C1, user: U1 }"))).toEqual([
      "schedules.jobs.a.target: needs exactly one of chat, user or key, not several: e.g. { chat: C0123 } or { user: U0456 }",
    ]);
    expect(configIssues(job("{ user: U1, thread: '1' }"))).toEqual([
      "schedules.jobs.a.target.thread: goes with chat: only a chat has threads",
    ]);
    expect(configIssues(job("{ key: 'slack:T1:C1', workspace: T1 }"))).toEqual([
      "schedules.jobs.a.target.workspace: is part of the key already: remove it",
    ]);
    expect(configIssues(job("{ room: C1 }"))[0]).toMatch(/^schedules\.jobs\.a\.target\.room: unknown key/);
  });

  it("checks names: the job's, its channel, its agent", () => {
    expect(
      configIssues(
        withJobs(
          '    "bad name":\n      cron: "0 9 * * *"\n      channel: slack\n      target: { chat: C1 }\n      message: x\n',
        ),
      ),
    ).toEqual(["schedules.jobs.bad name: must be letters, digits, '_', '.' or '-', starting with a letter or digit"]);
    expect(
      configIssues(
        withJobs(
          '    a:\n      cron: "0 9 * * *"\n      channel: teams\n      target: { chat: C1 }\n      prompt: x\n      agent: ghost\n',
        ),
      ),
    ).toEqual([
      'schedules.jobs.a.channel: no channel named "teams" under channels: (known channels: slack, tg)',
      'schedules.jobs.a.agent: no agent named "ghost": known agents: default',
    ]);
    expect(
      configIssues(
        withJobs(
          '    a:\n      cron: "0 9 * * *"\n      channel: slack\n      target: { chat: C1 }\n      message: x\n      agent: default\n',
        ),
      ),
    ).toEqual(["schedules.jobs.a.agent: only runs a prompt: remove it, or give the job a prompt instead of a message"]);
    const ok = parseConfig(
      withJobs(
        '    a:\n      cron: "0 9 * * *"\n      channel: slack\n      target: { chat: C1 }\n      prompt: x\n      agent: research\n',
        "agents:\n  research: {}\n",
      ),
      {},
    );
    expect(ok.schedules.jobs.a?.agent).toBe("research");
  });

  it("rejects unknown keys and bad limits", () => {
    expect(configIssues("schedules:\n  max_per_conversaton: 1\n")[0]).toMatch(
      /^schedules\.max_per_conversaton: unknown key: did you mean `max_per_conversation`\?/,
    );
    expect(configIssues("schedules:\n  max_per_tenant: 0\n")[0]).toMatch(/^schedules\.max_per_tenant: /);
  });

  it("config.example.yaml ships no job, and its commented jobs are valid once uncommented", () => {
    const file = path.join(ROOT, "config.example.yaml");
    expect(loadConfig({ file, env: {} }).config.schedules.jobs).toEqual({});
    const text = readFileSync(file, "utf8");
    const section = text.slice(text.indexOf("\nschedules:\n") + 1).split(/\n(?=[a-z#])(?!# {2})/)[0] ?? "";
    const uncommented = section.replace("jobs: {}", "jobs:").replace(/^#/gm, "");
    const config = parseConfig(`${CHANNELS}  telegram:\n    enabled: false\nagents:\n  research: {}\n${uncommented}`, {});
    expect(Object.keys(config.schedules.jobs)).toEqual(["standup", "build_report"]);
    expect(config.schedules.jobs.build_report?.target).toEqual({ chat: "-1001234567890" });
  });
});
