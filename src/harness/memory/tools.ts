/**
 * The agent's memory tools: `remember`, `update_memory` and `forget`. Each acts on the facts of
 * the person behind the run (the run's `user_id`, from its context or its `configurable`), so a
 * model can never reach another person's facts: it names facts by id, and ids are looked up in
 * that person's facts only. Every outcome is a short text the model reads; nothing is thrown.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "langchain";
import { z } from "zod";
import type { AppliedChanges, MemoryBook } from "./book.js";

export const REMEMBER = "remember";
export const UPDATE_MEMORY = "update_memory";
export const FORGET = "forget";

const NO_PERSON = "There is no person behind this run, so there is nothing to remember for.";
const NOT_IN_GROUPS = "Memory is not used in group chats here: nothing was changed.";

/** The person a run serves and where they wrote, from the run's context or its `configurable`. */
export interface RunPerson {
  personId: string;
  chatType?: string;
  name?: string;
}

/** The person behind a run, read from LangGraph's run context first, then `configurable`. */
export function personOf(
  source: { context?: unknown; configurable?: Record<string, unknown> } | undefined,
): RunPerson | undefined {
  const context = (source?.context ?? {}) as Record<string, unknown>;
  const configurable = source?.configurable ?? {};
  const pick = (key: string) => {
    const value = context[key] ?? configurable[key];
    return typeof value === "string" && value ? value : undefined;
  };
  const personId = pick("user_id");
  if (!personId) return undefined;
  const chatType = pick("chat_type");
  const name = (context.user as { name?: unknown } | undefined)?.name;
  return { personId, ...(chatType ? { chatType } : {}), ...(typeof name === "string" && name ? { name } : {}) };
}

function runPerson(book: MemoryBook, config: RunnableConfig | undefined): RunPerson | string {
  const person = personOf(config as { context?: unknown; configurable?: Record<string, unknown> } | undefined);
  if (!person) return NO_PERSON;
  if (!book.usedIn(person.chatType)) return NOT_IN_GROUPS;
  return person;
}

function said(done: AppliedChanges, missing: string): string {
  const lines = [
    ...done.added.map((f) => `Remembered [${f.id}]: ${f.text}`),
    ...done.updated.map((f) => `Updated [${f.id}]: ${f.text}`),
    ...done.removed.map((f) => `Forgot [${f.id}]: ${f.text}`),
    ...done.dropped.map((f) => `To make room, forgot the oldest [${f.id}]: ${f.text}`),
  ];
  return lines.length > 0 ? lines.join("\n") : missing;
}

/** The three tools over `book`. */
export function memoryTools(book: MemoryBook) {
  const remember = tool(
    async (args, config) => {
      const person = runPerson(book, config);
      if (typeof person === "string") return person;
      const done = await book.apply(person.personId, { add: [{ text: args.fact, category: args.category }] });
      return said(done, "Nothing was remembered: the fact was empty.");
    },
    {
      name: REMEMBER,
      description:
        "Remember a lasting fact about the user you are talking to, for later conversations (their name, where they live, a preference). " +
        "Use it when they ask you to remember something or tell you something about themselves worth keeping. One short sentence.",
      schema: z.object({
        fact: z.string().describe("One short sentence about the user, e.g. 'Prefers answers in German'."),
        category: z.string().optional().describe("One word: identity, location, work, preference, relationship, goal or other."),
      }),
    },
  );
  const update = tool(
    async (args, config) => {
      const person = runPerson(book, config);
      if (typeof person === "string") return person;
      const done = await book.apply(person.personId, { update: [{ id: args.id, text: args.fact }] });
      return said(done, `There is no remembered fact with id ${args.id}: nothing was changed.`);
    },
    {
      name: UPDATE_MEMORY,
      description: "Change a remembered fact about the user (by the id shown in your context), when it changed or was wrong.",
      schema: z.object({
        id: z.string().describe("The fact's id, as shown in brackets in your context, e.g. 3f9a1c."),
        fact: z.string().describe("The fact as it should read now."),
      }),
    },
  );
  const forget = tool(
    async (args, config) => {
      const person = runPerson(book, config);
      if (typeof person === "string") return person;
      const removed = await book.forget(person.personId, args.id);
      return removed
        ? `Forgot [${removed.id}]: ${removed.text}`
        : `There is no remembered fact with id ${args.id}: nothing was changed.`;
    },
    {
      name: FORGET,
      description: "Forget a remembered fact about the user (by the id shown in your context), e.g. when they ask you to.",
      schema: z.object({ id: z.string().describe("The fact's id, as shown in brackets in your context.") }),
    },
  );
  return [remember, update, forget];
}
