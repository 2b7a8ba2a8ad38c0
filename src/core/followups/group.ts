/**
 * A turn that answers several messages (a collected bucket, a run others were steered into): the
 * inbox keeps each message's entry, and the followers' entries are `running`, noted with the
 * leader's event id, until the turn ends. Recovery reads that note to answer a crashed group once.
 */
import { createHash } from "node:crypto";
import type { InboxEntry } from "../../bindings/types.js";
import type { InboundMessage } from "../../channels/types.js";
import type { CoreContext } from "../context.js";
import { type Inbox, LeftForNextProcess } from "../inbox.js";
import type { ChannelScope } from "../scope.js";

/** What a mode does with a message: it joined the running turn, it is over the cap, or it queues. */
export type Verdict = "taken" | "refuse" | "queue";

/** A follower the leader's run answers (collected with it, or steered and taken in). */
const IN = "in the turn of ";
/** A follower handed to the leader's run, not yet taken in (steered). */
const TO = "steered to ";

/** The inbox note of a message in the turn of `leader` (an event id of the same channel); `taken: false` while only handed to it. */
export function joinedNote(leader: string, taken = true): string {
  return `${taken ? IN : TO}${leader}`;
}

/** The leader an unfinished entry joined, and whether its run took it in. */
export function leaderOf(entry: InboxEntry): { leader: string; taken: boolean } | undefined {
  if (entry.state !== "running" || !entry.error) return undefined;
  if (entry.error.startsWith(IN)) return { leader: entry.error.slice(IN.length), taken: true };
  if (entry.error.startsWith(TO)) return { leader: entry.error.slice(TO.length), taken: false };
  return undefined;
}

/**
 * The id a steered message takes in the agent's thread, from its channel and event id: after a
 * crash, recovery finds it in the thread's history when the run had already taken it in.
 */
export function steeredId(channel: string, eventId: string): string {
  const h = createHash("sha256").update(`${channel}\n${eventId}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Marks a follower finished with its leader's turn: done, or failed without a notice of its own (the leader's covers it). */
export async function finishFollower(scope: ChannelScope, msg: InboundMessage, leader: string, ok: boolean): Promise<void> {
  const why = ok ? `answered with ${leader}` : `answered with ${leader}, which failed`;
  await scope.store.setInboxState(scope.name, msg.eventId, ok ? "done" : "failed", why);
}

/**
 * Runs `work` as the turn of `msgs` (the first leads): the followers are marked as joining it
 * first, and finished with it after. The leader goes through `Inbox.track`, which gives the
 * notice a failure needs; a turn left to the next process leaves its followers as they are.
 */
export async function trackGroup(
  inbox: Inbox,
  scope: ChannelScope,
  msgs: InboundMessage[],
  work: () => Promise<void>,
): Promise<void> {
  const [leader, ...followers] = msgs;
  if (!leader) return;
  for (const f of followers) await scope.store.setInboxState(scope.name, f.eventId, "running", joinedNote(leader.eventId));
  let end: "done" | "failed" | "received" | "running" = "received";
  await inbox.track(scope, leader, async () => {
    end = "failed";
    try {
      await work();
      end = "done";
    } catch (err) {
      if (err instanceof LeftForNextProcess) end = err.state;
      throw err;
    }
  });
  for (const f of followers) {
    if (end === "received") await scope.store.setInboxState(scope.name, f.eventId, "received");
    else if (end !== "running") await finishFollower(scope, f, leader.eventId, end === "done");
  }
}

/** A follow-up past `max_followups`: refused, with a notice saying why, and marked failed. */
export async function refuseFollowup(core: CoreContext, scope: ChannelScope, msg: InboundMessage, max: number): Promise<void> {
  await scope.store.setInboxState(scope.name, msg.eventId, "failed", "too many follow-ups");
  const text = `I already have ${max} messages waiting for this reply, so I couldn't take this one. Please send it again once I've answered.`;
  core.inBackground(scope.notify(msg.ref, text));
}
