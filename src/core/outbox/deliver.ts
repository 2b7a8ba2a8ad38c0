/**
 * One attempt at a `send` entry: its text split by the same rules as a reply (the channel's
 * length limit, counted on the converted text), each part posted with an idempotency key of its
 * own (`<entry id>:<part>`), and the progress written after every part, so an attempt after a
 * crash starts at the first part not recorded. Only the part in flight when a process died can
 * be posted twice, and not even that where the platform dedupes by the key (see README.md).
 */
import type { Outbox, OutboxEntry } from "../../bindings/outbox.js";
import { measureFor } from "../../channels/markdown/measure.js";
import type { Channel, ConversationRef, OutboundFile } from "../../channels/types.js";
import { AntlerError } from "../../errors.js";
import { splitMarkdown } from "../render/chunk.js";
import { Outbound } from "../render/outbound.js";
import type { RenderHooks } from "../render/types.js";
import { editInterval } from "../render/types.js";
import { type OutboxFile, progressOf, type SendProgress, sendPayloadOf } from "./payload.js";

/** The holder lost the entry (its lease lapsed and another replica took it): stop, post nothing more. */
export class LostHold extends AntlerError {
  constructor(id: string) {
    super("lease_lost", `outbox entry ${id} is held by another replica now`);
  }
}

export interface SendAttempt {
  store: Outbox;
  owner: string;
  channel: Channel;
  ref: ConversationRef;
  hooks: RenderHooks;
  callTimeoutMs: number;
}

/** The parts a text goes out as on `channel`. */
export function partsOf(channel: Channel, text: string): string[] {
  const { maxTextLength, markdown } = channel.capabilities;
  return splitMarkdown(text, maxTextLength, measureFor(markdown)).filter((c) => c.trim() !== "");
}

function fileOf(file: OutboxFile): OutboundFile {
  return { name: file.name, mime: file.mime, kind: file.kind, data: new Uint8Array(Buffer.from(file.data, "base64")) };
}

/**
 * Posts what is left of the entry; resolves to every message id posted for it and the ref of the
 * conversation they are in. Throws on the first part that fails.
 */
export async function deliverSend(entry: OutboxEntry, attempt: SendAttempt): Promise<{ ids: string[]; ref: ConversationRef }> {
  const { channel, store, owner } = attempt;
  const payload = sendPayloadOf(entry);
  const parts = partsOf(channel, payload.text);
  const files = payload.files ?? [];
  const progress: SendProgress = { ...progressOf(entry) };
  // Where the parts go: the first part's message may open the conversation's real place (a
  // Feishu DM's chat, a group topic the message started), and the rest follow it there.
  let ref = progress.ref ?? attempt.ref;
  // One call per part and no retry here: the worker's attempts (with their backoff) are the retries.
  const out = new Outbound(channel, attempt.hooks, editInterval(channel, ref), attempt.callTimeoutMs);
  const total = parts.length + files.length;
  while (progress.parts < total) {
    const index = progress.parts;
    const options = { idempotencyKey: `${entry.id}:${index}` };
    const paced = out.lastCallAt > Number.NEGATIVE_INFINITY;
    const file = files[index - parts.length];
    const handle =
      index < parts.length
        ? await out.deliver("send", () => channel.send(ref, { text: parts[index] ?? "" }, options), paced, 1)
        : await out.deliver("send", () => postFile(channel, ref, fileOf(file as OutboxFile), options), paced, 1);
    progress.parts += 1;
    if (handle) progress.ids.push(handle.id);
    if (handle && handle.ref.key !== ref.key) ref = handle.ref;
    progress.ref = ref;
    const held = await store.updateOutbound(entry.id, owner, { progress: progress as never });
    if (!held) throw new LostHold(entry.id);
  }
  return { ids: progress.ids, ref };
}

function postFile(channel: Channel, ref: ConversationRef, file: OutboundFile, options: { idempotencyKey: string }) {
  if (!channel.sendFile) throw new AntlerError("not_supported", `${channel.name} cannot post files`);
  return channel.sendFile(ref, file, options);
}
