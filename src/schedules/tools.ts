/**
 * The agent's schedule tools: `schedule_create`, `schedules_list`, `schedule_cancel`. They act on
 * the conversation the run serves, read from the run's `configurable` (CONVERSATION_CONFIG_KEY),
 * so a run outside a chat (a test, an API call) gets a plain "not here" instead. Every outcome,
 * refusals included, comes back as a short text the model relays; nothing is thrown at it.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "langchain";
import { z } from "zod";
import type { Schedule, ScheduleAction, ScheduleTiming } from "../bindings/schedules.js";
import { CONVERSATION_CONFIG_KEY, type RunConversation } from "../harness/types.js";
import type { ScheduleBook } from "./book.js";
import { ScheduleError } from "./errors.js";
import { formatCancel, formatScheduleList } from "./format.js";
import { describeTiming, isoInZone, parseLocalTime } from "./timing.js";

export const SCHEDULE_CREATE = "schedule_create";
export const SCHEDULES_LIST = "schedules_list";
export const SCHEDULE_CANCEL = "schedule_cancel";

const NOT_IN_CHAT = "Schedules can only be made from a chat conversation; this run serves none.";

const CreateArgs = z.object({
  message: z
    .string()
    .optional()
    .describe("A reminder posted as written when it fires, e.g. 'Time to stretch!'. Give this or prompt."),
  prompt: z
    .string()
    .optional()
    .describe(
      "An instruction you will run at that time, and post your answer, e.g. 'Send me the build status'. Give this or message.",
    ),
  in_seconds: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Fire once this many seconds from now (120 for 'in 2 minutes'). Give exactly one of in_seconds, at, cron."),
  at: z.string().optional().describe("Fire once at this local time in tz, ISO 8601, e.g. 2026-12-04T10:00."),
  cron: z
    .string()
    .optional()
    .describe(
      "Fire repeatedly: a cron expression in tz, 5 fields (minute hour day month weekday), e.g. '0 9 * * 1-5' for weekdays at 09:00.",
    ),
  tz: z.string().optional().describe("IANA time zone of at and cron, e.g. Europe/Berlin. Default UTC."),
  name: z.string().optional().describe("A short name shown in the schedule list."),
});

const CancelArgs = z.object({
  id: z.string().describe("The schedule's id (e.g. k3x9pq2a), or its number in schedules_list."),
});

/** The three schedule tools; `bookFor` gives the tenant's book, `clock` is now in ms. */
export function scheduleTools(bookFor: (tenant: string) => ScheduleBook, clock: () => number = Date.now) {
  const create = tool(
    async (args, config) => {
      const conversation = conversationOf(config);
      if (!conversation) return NOT_IN_CHAT;
      return answer(async () => {
        const action = actionOf(args);
        const timing = timingOf(args, clock());
        const schedule = await bookFor(conversation.tenant).create({
          conversation,
          ...(conversation.user ? { user: conversation.user } : {}),
          timing,
          action,
          ...(args.name ? { name: args.name } : {}),
        });
        return created(schedule);
      });
    },
    {
      name: SCHEDULE_CREATE,
      description:
        "Schedule a reminder (message) or a task you will run (prompt) in this conversation: once (in_seconds or at) " +
        "or repeatedly (cron). Returns the schedule's id and its next fire time.",
      schema: CreateArgs,
    },
  );
  const list = tool(
    async (_args, config) => {
      const conversation = conversationOf(config);
      if (!conversation) return NOT_IN_CHAT;
      return answer(async () => formatScheduleList(await bookFor(conversation.tenant).list(conversation.key)));
    },
    {
      name: SCHEDULES_LIST,
      description: "List the schedules of this conversation: number, id, what each does and when it fires next.",
      schema: z.object({}),
    },
  );
  const cancel = tool(
    async (args, config) => {
      const conversation = conversationOf(config);
      if (!conversation) return NOT_IN_CHAT;
      return answer(async () => {
        const outcome = await bookFor(conversation.tenant).cancel(conversation.key, args.id, conversation.user);
        return formatCancel(outcome);
      });
    },
    {
      name: SCHEDULE_CANCEL,
      description: "Cancel one of this conversation's schedules by its id or its number in schedules_list.",
      schema: CancelArgs,
    },
  );
  return [create, list, cancel];
}

/** The conversation the run serves, when the run carries one. */
function conversationOf(config: RunnableConfig | undefined): RunConversation | undefined {
  const value = config?.configurable?.[CONVERSATION_CONFIG_KEY] as RunConversation | undefined;
  return value && typeof value.tenant === "string" && typeof value.key === "string" && typeof value.channel === "string"
    ? value
    : undefined;
}

type CreateInput = z.infer<typeof CreateArgs>;

function actionOf(args: CreateInput): ScheduleAction {
  const message = args.message?.trim();
  const prompt = args.prompt?.trim();
  if (message && prompt) throw new ScheduleError("schedule_invalid", "give either message or prompt, not both");
  if (message) return { kind: "send", text: message };
  if (prompt) return { kind: "run", prompt };
  throw new ScheduleError("schedule_invalid", "give message (a reminder text) or prompt (an instruction to run)");
}

function timingOf(args: CreateInput, now: number): ScheduleTiming {
  const tz = args.tz?.trim() || "UTC";
  const given = [args.in_seconds !== undefined, Boolean(args.at?.trim()), Boolean(args.cron?.trim())].filter(Boolean).length;
  if (given !== 1) throw new ScheduleError("schedule_invalid", "give exactly one of in_seconds, at or cron");
  if (args.in_seconds !== undefined) return { at: now + args.in_seconds * 1000, tz };
  if (args.at?.trim()) return { at: parseLocalTime(args.at, tz), tz };
  return { cron: (args.cron ?? "").trim(), tz };
}

function created(schedule: Schedule): string {
  const next = schedule.nextFireAt === undefined ? "never" : isoInZone(schedule.nextFireAt, schedule.timing.tz);
  const what = schedule.action.kind === "send" ? "reminder" : "task";
  const repeat = "cron" in schedule.timing ? `; repeats: ${describeTiming(schedule.timing)}` : "";
  return `Scheduled ${what} \`${schedule.id}\` (${schedule.name}): next fire ${next} (${schedule.timing.tz})${repeat}.`;
}

/** A refusal the model can explain; anything else is a real failure and is thrown on. */
async function answer(run: () => Promise<string>): Promise<string> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ScheduleError) return `Not done: ${err.message}.`;
    throw err;
  }
}
