/**
 * Dynamic context: today's date and who is talking, added to the newest user message of the
 * model request only. The static system prompt stays byte-identical between turns (so provider
 * prompt caches keep working) and the stored history is unchanged.
 */
import { type BaseMessage, HumanMessage, isHumanMessage } from "@langchain/core/messages";
import { createMiddleware } from "langchain";
import type { RunUser } from "../types.js";

export const DYNAMIC_CONTEXT = "DynamicContext";

/**
 * Who a run serves, in the keys a DeerFlow graph reads: `user_id` is the person id
 * (`RunUser.personId`), `channel_user_id` the platform's own id. A local run has them in its
 * `configurable` and its context; a remote run sends them as its `context`.
 */
export interface RunIdentity {
  user_id?: string;
  channel_user_id?: string;
  channel_name?: string;
  chat_type?: string;
}

/** What the runtime passes as LangGraph run context. */
export interface AntlerRunContext extends RunIdentity {
  user?: RunUser;
  labels?: Record<string, string>;
}

/** The identity keys of a run's user; empty when no person is behind the run. */
export function identityOf(user: RunUser | undefined): RunIdentity {
  if (!user) return {};
  const out: RunIdentity = {};
  if (user.personId) out.user_id = user.personId;
  if (user.id) out.channel_user_id = user.id;
  if (user.channel) out.channel_name = user.channel;
  if (user.chatType) out.chat_type = user.chatType;
  return out;
}

export interface DynamicContextOptions {
  /** Clock, for tests. */
  now?: () => Date;
  /** IANA time zone for the date line; the process zone when unset. */
  timeZone?: string;
}

export function contextBlock(ctx: AntlerRunContext | undefined, now: Date, timeZone?: string): string {
  const date = now.toLocaleDateString("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
  const weekday = now.toLocaleDateString("en-US", { timeZone, weekday: "long" });
  const lines = [`Current date: ${date} (${weekday})`];
  const user = ctx?.user;
  if (user) lines.push(`User: ${user.name ? `${user.name} (id ${user.id})` : `id ${user.id}`}`);
  for (const [key, value] of Object.entries(ctx?.labels ?? {})) lines.push(`${key}: ${value}`);
  return `<context>\n${lines.join("\n")}\n</context>`;
}

function withContext(messages: readonly BaseMessage[], block: string): BaseMessage[] {
  const at = messages.findLastIndex((m) => isHumanMessage(m));
  if (at < 0) return [...messages];
  const target = messages[at] as HumanMessage;
  const content =
    typeof target.content === "string"
      ? `${block}\n\n${target.content}`
      : [{ type: "text" as const, text: block }, ...target.content];
  const copy = new HumanMessage({ content, id: target.id, name: target.name });
  return [...messages.slice(0, at), copy, ...messages.slice(at + 1)];
}

export function dynamicContextMiddleware(options: DynamicContextOptions = {}) {
  const now = options.now ?? (() => new Date());
  return createMiddleware({
    name: DYNAMIC_CONTEXT,
    wrapModelCall: (request, handler) => {
      const block = contextBlock(request.runtime.context as AntlerRunContext | undefined, now(), options.timeZone);
      return handler({ ...request, messages: withContext(request.messages, block) });
    },
  });
}
