/**
 * Memory per person, the middleware: the person's remembered facts go into the newest user
 * message's `<context>` block of each model request (read once per run; the static system prompt
 * stays byte-identical and the stored history unchanged), and after the run's final answer a
 * model call of its own reads the turn for facts to add, update or remove (memory/extract.ts).
 * It also brings the agent's memory tools (memory/tools.ts).
 *
 * Everything happens inside the model node (no graph step of its own): the final answer is the
 * model's response without tool calls, and the extraction is started then, outside the run's
 * context (so the run's end does not abort it and its tokens never join the run's stream); the
 * reply is never held for it. `MemoryBook.settled()` waits for it.
 *
 * No person behind the run (no `user_id`), or a group chat where `agent.memory.groups` is `off`:
 * the middleware does nothing.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage, isAIMessage, isHumanMessage } from "@langchain/core/messages";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { createMiddleware } from "langchain";
import type { MemoryBook } from "../memory/book.js";
import { extractFacts, turnOf } from "../memory/extract.js";
import { memoryTools, personOf, type RunPerson } from "../memory/tools.js";
import type { MemoryFact } from "../memory/types.js";
import type { UsageTarget } from "../usage.js";

export const MEMORY = "Memory";

export interface MemoryMiddlewareOptions {
  /** The facts, in the tenant's store. */
  book: MemoryBook;
  /** The model that reads each finished turn for facts; without one, facts come from the tools only. */
  model?: BaseChatModel;
  /** Where the extraction's usage goes (kind `memory`), under the extraction model's name. */
  usage?: UsageTarget;
  /** Read each finished turn for facts (default true when there is a model). */
  extraction?: boolean;
}

const HEADING = "Remembered about this user from earlier conversations (ids for update_memory and forget):";

/** The lines the facts add to the context block. */
export function memoryLines(facts: readonly MemoryFact[]): string[] {
  return [HEADING, ...facts.map((f) => `- [${f.id}] ${f.text}`)];
}

/**
 * The messages with `lines` in the newest user message's context block: inside the `<context>`
 * block the dynamic context put there, or in a block of their own when there is none.
 */
export function withMemory(messages: readonly BaseMessage[], lines: readonly string[]): BaseMessage[] {
  const at = messages.findLastIndex((m) => isHumanMessage(m));
  if (at < 0) return [...messages];
  const target = messages[at] as HumanMessage;
  const add = (text: string) => {
    const close = text.startsWith("<context>\n") ? text.indexOf("\n</context>") : -1;
    if (close >= 0) return `${text.slice(0, close)}\n${lines.join("\n")}${text.slice(close)}`;
    return `<context>\n${lines.join("\n")}\n</context>\n\n${text}`;
  };
  let content: HumanMessage["content"];
  if (typeof target.content === "string") content = add(target.content);
  else {
    const [first, ...rest] = target.content;
    content =
      first?.type === "text" && typeof first.text === "string"
        ? [{ ...first, text: add(first.text) }, ...rest]
        : [{ type: "text" as const, text: add("").trimEnd() }, ...target.content];
  }
  const copy = new HumanMessage({ content, id: target.id, name: target.name, additional_kwargs: target.additional_kwargs });
  return [...messages.slice(0, at), copy, ...messages.slice(at + 1)];
}

export function memoryMiddleware(options: MemoryMiddlewareOptions) {
  const { book, model } = options;
  const extraction = (options.extraction ?? true) && model !== undefined;
  // One read per run: a run's model calls share its context object.
  const perRun = new WeakMap<object, Promise<MemoryFact[]>>();
  const factsFor = (person: RunPerson, context: unknown): Promise<MemoryFact[]> => {
    const read = () =>
      book.list(person.personId).catch((err: unknown) => {
        book.logger.warn(
          { err, person: person.personId },
          "memory: could not read the person's facts; the run goes on without them",
        );
        return [];
      });
    if (!context || typeof context !== "object") return read();
    let facts = perRun.get(context);
    if (!facts) {
      facts = read();
      perRun.set(context, facts);
    }
    return facts;
  };
  return createMiddleware({
    name: MEMORY,
    tools: memoryTools(book),
    wrapModelCall: async (request, handler) => {
      const person = personOf(request.runtime as { context?: unknown; configurable?: Record<string, unknown> });
      if (!person || !book.usedIn(person.chatType)) return handler(request);
      const facts = await factsFor(person, request.runtime.context);
      const response = await handler(
        facts.length > 0 ? { ...request, messages: withMemory(request.messages, memoryLines(facts)) } : request,
      );
      if (extraction && model && isAIMessage(response) && !response.tool_calls?.length) {
        // The thread's own messages: those of the request may carry other middlewares' additions.
        const turn = turnOf(request.state.messages, response, person.chatType === "group");
        if (turn) {
          const job = { book, model, personId: person.personId, name: person.name, turn, usage: options.usage };
          // Outside the run's context: LangChain would hand the call the run's callbacks and signal.
          AsyncLocalStorageProviderSingleton.getInstance().run(undefined, () =>
            book.track(person.personId, (signal) => extractFacts({ ...job, signal })),
          );
        }
      }
      return response;
    },
  });
}
