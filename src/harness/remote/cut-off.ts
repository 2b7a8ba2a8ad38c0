/**
 * A remote run's input: the user's message, after the reply it cut off when
 * `RunOptions.interrupted` is set (see ../cut-off.ts). The server thread is read first, so a
 * partial the stopped run's repair stored is marked in place rather than sent twice.
 */
import type { Client } from "@langchain/langgraph-sdk";
import { cutOffMessages } from "../cut-off.js";
import type { RunOptions } from "../types.js";
import { messagesIn } from "./messages.js";
import { userInput } from "./stream.js";

export async function runInput(client: Client, threadId: string, text: string, options: RunOptions) {
  const input = userInput(text, options.images);
  if (!options.interrupted) return input;
  const state = await client.threads.getState(threadId);
  const lead = cutOffMessages(options.interrupted, messagesIn(state.values)).map((m) => ({
    type: "ai",
    content: m.text,
    id: m.id,
  }));
  return { messages: [...lead, ...(input.messages as unknown[])] };
}
