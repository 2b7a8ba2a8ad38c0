/**
 * Chat commands. `/stop`, `/status`, `/schedules`, `/queue`, `/memory` and `/help` answer at once, even while a reply is running;
 * `/new` and `/agent` wait their turn in the conversation's queue so they never cut a reply in half.
 */

export type CommandName = "new" | "help" | "status" | "stop" | "agent" | "schedules" | "queue" | "memory";

const KNOWN: readonly CommandName[] = ["new", "help", "status", "stop", "agent", "schedules", "queue", "memory"];

/** Commands that bypass the conversation queue. */
export const IMMEDIATE: ReadonlySet<CommandName> = new Set(["help", "status", "stop", "schedules", "queue", "memory"]);

/** Parses `/name`, `/name@bot` or `/name args`; undefined for anything else, including unknown commands. */
export function parseCommand(text: string): CommandName | undefined {
  const match = /^\/([a-z]+)(?:@\S+)?(?:\s|$)/i.exec(text.trim());
  const name = match?.[1]?.toLowerCase();
  return KNOWN.find((k) => k === name);
}

/** What follows the command name (`/agent research` → `research`), trimmed; empty when nothing does. */
export function commandArgument(text: string): string {
  return text
    .trim()
    .replace(/^\/[a-z]+(?:@\S+)?/i, "")
    .trim();
}

/**
 * The `/help` answer. How to answer a question depends on the chat: with buttons the user taps
 * one; without (a terminal, a plain-text chat) they type the option's number or a word. `/memory`
 * is listed where the chat's agent remembers people.
 */
export function helpText(capabilities: { buttons: boolean }, available: { memory?: boolean } = {}): string {
  const answering = capabilities.buttons
    ? [
        "When I ask a question, tap a button or reply with the option number or your own words.",
        'When a tool needs your approval, tap Approve or Reject, or reply "approve" or "reject <reason>".',
      ]
    : [
        "When I ask a question, type the option's number or your own words.",
        'When a tool needs your approval, type "approve" or "reject <reason>".',
      ];
  return [
    "I'm an AI assistant. Send a message and I'll answer here.",
    "",
    "Commands:",
    "- /new — start a fresh conversation (I forget what we said)",
    "- /status — show this conversation's thread, agent, model and whether I'm replying",
    "- /agent — list the agents you can talk to here; /agent NAME switches to one (in a new conversation)",
    "- /stop — stop the reply I'm writing",
    "- /queue — what your messages do while I'm still answering; /queue collect, steer, interrupt or queue changes it",
    "- /schedules — list this conversation's reminders and scheduled tasks; /schedules cancel N cancels one",
    ...(available.memory
      ? ["- /memory — what I remember about you; /memory forget N forgets one thing, /memory forget all everything"]
      : []),
    "- /help — this list",
    "",
    ...answering,
  ].join("\n");
}
