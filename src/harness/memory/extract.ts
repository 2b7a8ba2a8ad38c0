/**
 * After a turn: a model call of its own reads what the person wrote and what the agent answered,
 * with the facts kept so far, and answers with the changes to make, as JSON. Anything else it
 * answers (prose, broken JSON, unknown ids, a failed call) changes nothing.
 *
 * Only the person's own words are read as the source of facts: in a group, only the message that
 * started the run (messages steered into the run may be other members'), and the prompt asks for
 * facts about the writer alone.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  type BaseMessage,
  HumanMessage,
  isAIMessage,
  isHumanMessage,
  isToolMessage,
  SystemMessage,
} from "@langchain/core/messages";
import { withoutCutOffMark } from "../cut-off.js";
import { ASK_CLARIFICATION } from "../tools/clarification.js";
import { reportUsage, type UsageTarget, usageOf } from "../usage.js";
import type { MemoryBook, MemoryChanges } from "./book.js";
import type { MemoryFact } from "./types.js";

/** What one turn gives the extraction: the person's words and the agent's final reply. */
export interface TurnText {
  user: string[];
  reply: string;
}

/** The longest piece of a turn the extraction reads, in characters. */
const PIECE_MAX_CHARS = 4_000;

const STEERED = "antler_steered";

/** The context block the dynamic context (and memory) put before the user's words for the model. */
const CONTEXT_BLOCK = /^<context>\n[\s\S]*?\n<\/context>\n\n/;

/**
 * The turn that `reply` ends: the user message that started it and, outside groups, those steered
 * into it; answers to the agent's questions count as the user's words. Undefined when there is
 * no user message.
 */
export function turnOf(messages: readonly BaseMessage[], reply: BaseMessage, group: boolean): TurnText | undefined {
  const start = messages.findLastIndex((m) => isHumanMessage(m) && !m.additional_kwargs?.[STEERED]);
  if (start < 0) return undefined;
  const user: string[] = [];
  messages.slice(start).forEach((m, i) => {
    if (isHumanMessage(m) && (i === 0 || !group)) user.push(cut(m.text.replace(CONTEXT_BLOCK, "")));
    else if (isToolMessage(m) && m.name === ASK_CLARIFICATION) user.push(cut(`(answering a question) ${m.text}`));
  });
  const said = user.filter((t) => t.trim());
  const text = isAIMessage(reply) ? withoutCutOffMark(reply.text) : "";
  return said.length > 0 ? { user: said, reply: cut(text) } : undefined;
}

function cut(text: string): string {
  return text.length <= PIECE_MAX_CHARS ? text : `${text.slice(0, PIECE_MAX_CHARS)}…`;
}

const INSTRUCTIONS = `You keep a short list of lasting facts about one person for a chat assistant, so that it remembers them in later conversations.
You are given the facts kept so far (each with its id), what the person just wrote, and the assistant's reply.
Answer with one JSON object and nothing else:
{"add": [{"text": "...", "category": "..."}], "update": [{"id": "...", "text": "..."}], "remove": ["id"]}
Rules:
- Keep only facts about this person that stay true beyond this conversation: their name, where they live, their work, their preferences, their time zone and languages, people and things that are theirs, what they are working towards.
- Take facts only from what the person said about themselves. Never from the assistant's reply alone, never about other people in the chat, never guesses.
- Leave out the task at hand, one-off questions and anything said only for this conversation.
- Write each fact as one short sentence about the person, in the third person, in the language the person wrote in. category is one word: identity, location, work, preference, relationship, goal or other.
- When the person corrects or changes a kept fact, update it by its id. When they say it is no longer true or ask to forget it, remove it.
- Do not add a fact that is already kept.
- When nothing changes, answer {"add": [], "update": [], "remove": []}.`;

/** The messages of the extraction call. */
export function extractionPrompt(facts: readonly MemoryFact[], turn: TurnText, name: string | undefined): BaseMessage[] {
  const kept = facts.length > 0 ? facts.map((f) => `- [${f.id}] ${f.text}`).join("\n") : "(none)";
  const who = name ? `The person: ${name}` : "The person: (name unknown)";
  const body = [
    who,
    "",
    "Facts kept so far:",
    kept,
    "",
    "What the person wrote:",
    ...turn.user.map((t) => `> ${t.replace(/\n/g, "\n> ")}`),
    "",
    "The assistant's reply:",
    turn.reply || "(none)",
  ].join("\n");
  return [new SystemMessage(INSTRUCTIONS), new HumanMessage(body)];
}

/**
 * The changes in a model's answer: the first JSON object in it (a code fence around it is fine),
 * each list read entry by entry, entries that do not fit skipped. Undefined when there is no
 * object to read at all.
 */
export function parseChanges(answer: string, known: ReadonlySet<string>): MemoryChanges | undefined {
  const json = firstObject(answer);
  if (!json) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const list = (key: string) => (Array.isArray(v[key]) ? (v[key] as unknown[]) : []);
  const text = (e: Record<string, unknown>) => (typeof e.text === "string" ? e.text : "");
  const category = (e: Record<string, unknown>) => (typeof e.category === "string" ? e.category : undefined);
  const objects = (key: string) => list(key).filter((e): e is Record<string, unknown> => !!e && typeof e === "object");
  return {
    add: [
      ...list("add")
        .filter((e): e is string => typeof e === "string")
        .map((t) => ({ text: t })),
      ...objects("add").map((e) => ({ text: text(e), category: category(e) })),
    ].filter((e) => e.text.trim()),
    update: objects("update")
      .filter((e) => typeof e.id === "string" && known.has(e.id) && text(e).trim())
      .map((e) => ({ id: e.id as string, text: text(e), category: category(e) })),
    remove: list("remove")
      .map((e) => (typeof e === "string" ? e : e && typeof e === "object" ? (e as { id?: unknown }).id : undefined))
      .filter((id): id is string => typeof id === "string" && known.has(id)),
  };
}

/** The first balanced `{…}` in the text, strings and escapes respected. */
function firstObject(text: string): string | undefined {
  const start = text.indexOf("{");
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

export interface ExtractionJob {
  book: MemoryBook;
  model: BaseChatModel;
  personId: string;
  name?: string | undefined;
  turn: TurnText;
  usage?: UsageTarget | undefined;
  signal: AbortSignal;
}

/** One extraction: the call, its usage reported as `memory`, and the changes applied. */
export async function extractFacts(job: ExtractionJob): Promise<void> {
  const { book, personId } = job;
  const facts = await book.list(personId);
  const answer = await job.model.invoke(extractionPrompt(facts, job.turn, job.name), {
    signal: job.signal,
    tags: ["antler:memory"],
  });
  reportUsage(job.usage, "memory", usageOf(answer));
  const changes = parseChanges(answer.text, new Set(facts.map((f) => f.id)));
  if (!changes) {
    // The answer may hold what the person said: its length only, never its text.
    book.logger.warn({ person: personId, chars: answer.text.length }, "memory: the extraction answered no JSON; nothing changed");
    return;
  }
  const done = await book.apply(personId, changes);
  const counts = {
    added: done.added.length,
    updated: done.updated.length,
    removed: done.removed.length,
    dropped: done.dropped.length,
  };
  if (counts.added + counts.updated + counts.removed + counts.dropped > 0)
    book.logger.debug({ person: personId, ...counts }, "memory updated");
}
