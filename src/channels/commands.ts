/**
 * Chat commands. `/stop`, `/status` and `/help` answer at once, even while a reply is running;
 * `/new` waits its turn in the conversation's queue so it never cuts a reply in half.
 */

export type CommandName = "new" | "help" | "status" | "stop";

const KNOWN: readonly CommandName[] = ["new", "help", "status", "stop"];

/** Commands that bypass the conversation queue. */
export const IMMEDIATE: ReadonlySet<CommandName> = new Set(["help", "status", "stop"]);

/** Parses `/name`, `/name@bot` or `/name args`; undefined for anything else, including unknown commands. */
export function parseCommand(text: string): CommandName | undefined {
  const match = /^\/([a-z]+)(?:@\S+)?(?:\s|$)/i.exec(text.trim());
  const name = match?.[1]?.toLowerCase();
  return KNOWN.find((k) => k === name);
}

export const HELP_TEXT = [
  "I'm an AI assistant. Send a message and I'll answer here.",
  "",
  "Commands:",
  "- /new — start a fresh conversation (I forget what we said)",
  "- /status — show this conversation's thread, model and whether I'm replying",
  "- /stop — stop the reply I'm writing",
  "- /help — this list",
  "",
  "When I ask a question, tap a button or reply with the option number or your own words.",
].join("\n");
