/**
 * The `schedules:` section: the limits on schedules people and agents make, and the operator's
 * own jobs (`jobs:`), each posting a fixed message or running the agent on a cron or once.
 * Cron expressions and time zones are checked here with croner, the library that fires them.
 */
import { Cron, CronDate } from "croner";
import { z } from "zod";
import { bool, num } from "./values.js";

/** A platform id: YAML may read a numeric chat id (Telegram's -100…) as a number. */
const PlatformId = z.union([z.string().min(1), z.number()]).transform(String);

/**
 * Where a job posts: a chat (optionally one thread of it), a user's direct chat, or a
 * conversation key. `workspace` names the Slack team / Feishu tenant / Discord guild where the
 * platform needs one.
 */
const JobTarget = z
  .strictObject({
    chat: PlatformId.optional(),
    thread: PlatformId.optional(),
    user: PlatformId.optional(),
    workspace: PlatformId.optional(),
    key: z.string().min(1).optional(),
  })
  .superRefine((t, ctx) => {
    const given = [t.chat, t.user, t.key].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `needs exactly one of chat, user or key${given > 1 ? ", not several" : ""}: e.g. { chat: C0123 } or { user: U0456 }`,
      });
    }
    if (t.thread !== undefined && t.chat === undefined)
      ctx.addIssue({ code: "custom", path: ["thread"], message: "goes with chat: only a chat has threads" });
    if (t.workspace !== undefined && t.key !== undefined)
      ctx.addIssue({ code: "custom", path: ["workspace"], message: "is part of the key already: remove it" });
  })
  .transform(
    (t): JobTargetOut =>
      t.key !== undefined
        ? { key: t.key }
        : t.user !== undefined
          ? { user: t.user, ...(t.workspace ? { workspace: t.workspace } : {}) }
          : {
              chat: t.chat ?? "",
              ...(t.thread ? { thread: t.thread } : {}),
              ...(t.workspace ? { workspace: t.workspace } : {}),
            },
  );

type JobTargetOut =
  | { chat: string; thread?: string; workspace?: string }
  | { user: string; workspace?: string }
  | { key: string };

/** Names become ids (`cfg:<name>`) and appear in chats and logs. */
const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export const ScheduleJobConfig = z
  .strictObject({
    /** Repeating: 5 fields (minute hour day month weekday) or 6 with seconds first. */
    cron: z.string().optional(),
    /** Once: an ISO 8601 time, on the wall clock of `tz` unless it carries an offset. */
    at: z.string().optional(),
    /** IANA time zone of `cron` and `at`. */
    tz: z.string().default("UTC"),
    /** The channel instance (a key under `channels:`) it posts through. */
    channel: z.string().min(1),
    target: JobTarget,
    /** Posted as written (Markdown). */
    message: z.string().optional(),
    /** Run by the agent; its answer is posted. */
    prompt: z.string().optional(),
    /** Agent that runs `prompt`; the conversation's when absent. */
    agent: z.string().optional(),
    /** `fresh`: a new agent thread for each fire; `conversation`: the target conversation's own. */
    thread: z.enum(["fresh", "conversation"]).default("conversation"),
    enabled: bool().default(true),
  })
  .superRefine((job, ctx) => {
    const add = (path: string[], message: string) => ctx.addIssue({ code: "custom", path, message });
    const zone = zoneProblem(job.tz);
    if (zone) add(["tz"], zone);
    if ((job.cron === undefined) === (job.at === undefined)) {
      add([], "needs cron (repeating) or at (once), exactly one of them");
    } else if (!zone && job.cron !== undefined) {
      const problem = cronProblem(job.cron, job.tz);
      if (problem) add(["cron"], problem);
    } else if (!zone && job.at !== undefined && !isTime(job.at, job.tz)) {
      add(["at"], `"${job.at}" is not an ISO 8601 time: write it like 2026-12-04T10:00 (on the clock of tz)`);
    }
    if ((job.message === undefined) === (job.prompt === undefined)) {
      add([], "needs message (posted as written) or prompt (run by the agent), exactly one of them");
    } else if (!(job.message ?? job.prompt ?? "").trim()) {
      add([job.message !== undefined ? "message" : "prompt"], "is empty: write the text");
    }
    if (job.agent !== undefined && job.prompt === undefined)
      add(["agent"], "only runs a prompt: remove it, or give the job a prompt instead of a message");
  });

export const SchedulesConfig = z
  .strictObject({
    /** A fire missed by at most this long (the gateway was down) still runs once; an older one is recorded as missed. */
    grace_ms: num().pipe(z.number().int().min(0)).default(300_000),
    /** Schedules one conversation may have from people and agents. */
    max_per_conversation: num().pipe(z.number().int().positive()).default(10),
    /** Schedules one tenant may have from people and agents. */
    max_per_tenant: num().pipe(z.number().int().positive()).default(500),
    /** Shortest time between two fires of a cron made by people or agents, in seconds (jobs: are exempt). */
    min_interval_s: num().pipe(z.number().int().min(1)).default(60),
    jobs: z
      .record(z.string(), ScheduleJobConfig)
      .superRefine((jobs, ctx) => {
        for (const name of Object.keys(jobs)) {
          if (JOB_NAME.test(name)) continue;
          ctx.addIssue({
            code: "custom",
            path: [name],
            message: "must be letters, digits, '_', '.' or '-', starting with a letter or digit",
          });
        }
      })
      .default({}),
  })
  .prefault({});

export type SchedulesConfig = z.output<typeof SchedulesConfig>;
export type ScheduleJobConfig = z.output<typeof ScheduleJobConfig>;

/** What is wrong with a time zone name, or undefined. */
function zoneProblem(tz: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return undefined;
  } catch {
    return `unknown time zone "${tz}": use an IANA name such as Europe/Berlin or UTC`;
  }
}

/** What is wrong with a cron expression in a zone, or undefined (the same checks as the schedules' own). */
function cronProblem(cron: string, tz: string): string | undefined {
  try {
    const job = new Cron(cron, { timezone: tz, paused: true, mode: "5-or-6-parts" });
    return job.nextRun() ? undefined : `cron expression \`${cron}\` never fires (no such date): fix it`;
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/^CronPattern:\s*/, "");
    return `bad cron expression \`${cron}\`: ${reason}: write 5 fields (minute hour day month weekday), or 6 with seconds first`;
  }
}

/** A time CronDate reads, on a day the calendar has (CronDate would roll Feb 30 into March). */
function isTime(at: string, tz: string): boolean {
  const text = at.trim().replace(" ", "T");
  const [y, m, d] = (/^(\d{4})-(\d{2})-(\d{2})/.exec(text) ?? []).slice(1).map(Number);
  const day = new Date(Date.UTC(y ?? 0, (m ?? 0) - 1, d ?? 0));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== (m ?? 0) - 1 || day.getUTCDate() !== d) return false;
  try {
    return Number.isFinite(new CronDate(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00` : text, tz).getTime());
  } catch {
    return false;
  }
}

/**
 * Names the jobs give that the rest of the config must have: the channel under `channels:`,
 * the agent among the agents. Run by the schema's cross-section check.
 */
export function checkScheduleRefs(
  schedules: SchedulesConfig,
  known: { channels: string[]; agents: string[] },
): Array<{ path: (string | number)[]; message: string }> {
  const issues: Array<{ path: (string | number)[]; message: string }> = [];
  for (const [name, job] of Object.entries(schedules.jobs)) {
    if (!known.channels.includes(job.channel)) {
      const list = known.channels.length > 0 ? `known channels: ${known.channels.join(", ")}` : "channels: is empty";
      issues.push({
        path: ["schedules", "jobs", name, "channel"],
        message: `no channel named "${job.channel}" under channels: (${list})`,
      });
    }
    if (job.agent !== undefined && !known.agents.includes(job.agent)) {
      issues.push({
        path: ["schedules", "jobs", name, "agent"],
        message: `no agent named "${job.agent}": known agents: ${known.agents.join(", ")}`,
      });
    }
  }
  return issues;
}
