/**
 * `/memory`: what the agent of this chat remembers about the person who asks (memory per person,
 * `features.memory`). `/memory` lists their facts, numbered; `/memory forget N` forgets one;
 * `/memory forget all` (or `/memory clear`) forgets them all. Only the asker's own facts, found by
 * their person id in their tenant's memory, are ever read or changed.
 *
 * In a group chat the list would be read by every member, so there `/memory` only says to ask in
 * a direct chat (or that memory is not used in groups here).
 */
import type { InboundMessage } from "../channels/types.js";
import type { PersonMemory } from "../harness/memory/types.js";
import { commandArgument } from "./commands.js";
import type { CoreContext } from "./context.js";
import { runUser } from "./identity.js";
import type { ChannelScope } from "./scope.js";

/** How long `/memory` waits for the extraction of the asker's last turn before it reads. */
const SETTLE_MS = 10_000;

export const MEMORY_TEXT = {
  off: "I don't keep a memory of people in this chat: memory is off for its agent.",
  noPerson: "I can't tell who you are here, so there is no memory to show.",
  groupOff: "I don't use memory in group chats here.",
  group: "What I remember about you is private: send /memory to me in a direct chat to see it or make me forget it.",
  empty: "I don't remember anything about you yet.",
  usage:
    "Use /memory to see what I remember about you, /memory forget N to forget one thing, and /memory forget all to forget everything.",
} as const;

/** The memory of the agent this chat talks to now, when it remembers people. */
export async function chatMemory(core: CoreContext, scope: ChannelScope, msg: InboundMessage): Promise<PersonMemory | undefined> {
  const agent = await core.conversations.agentFor(scope, msg);
  if (!core.conversations.serves(scope, agent)) return undefined;
  return (await core.conversations.harness(scope, agent)).memory;
}

/** The answer to `/memory …` (Markdown). */
export async function memoryCommand(core: CoreContext, scope: ChannelScope, msg: InboundMessage): Promise<string> {
  const memory = await chatMemory(core, scope, msg);
  if (!memory) return MEMORY_TEXT.off;
  const chatType = msg.ref.chatType;
  if (chatType === "group") return memory.usedIn(chatType) ? MEMORY_TEXT.group : MEMORY_TEXT.groupOff;
  const personId = runUser(scope, msg.user, chatType).personId;
  if (!personId) return MEMORY_TEXT.noPerson;
  // The reply before this command may still be read for facts: wait for it, so the list is current.
  await settle(memory, personId);
  const [verb, which] = commandArgument(msg.text).toLowerCase().split(/\s+/, 2);
  if (!verb) return listText(await memory.list(personId));
  if (verb === "clear" || (verb === "forget" && which === "all")) {
    const count = await memory.clear(personId);
    return count === 0
      ? MEMORY_TEXT.empty
      : `Done: I forgot everything I remembered about you (${count} ${count === 1 ? "thing" : "things"}).`;
  }
  if (verb !== "forget" || !which || !/^\d+$/.test(which)) return MEMORY_TEXT.usage;
  const facts = await memory.list(personId);
  const fact = facts[Number(which) - 1];
  if (!fact) return `There is no number ${which} in what I remember about you: /memory lists it.`;
  await memory.forget(personId, fact.id);
  return `Forgot: ${fact.text}`;
}

function listText(facts: ReadonlyArray<{ text: string }>): string {
  if (facts.length === 0) return MEMORY_TEXT.empty;
  return [
    "What I remember about you:",
    ...facts.map((f, i) => `${i + 1}. ${f.text}`),
    "",
    "/memory forget N forgets one, /memory forget all forgets everything.",
  ].join("\n");
}

async function settle(memory: PersonMemory, personId: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([memory.settled(personId), new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_MS)))]);
  clearTimeout(timer);
}
