/** Short messages outside a reply: busy, restarted, command output, errors. */
import type { Channel, ConversationRef, MessageHandle, OutboundContent } from "../types.js";
import { splitMarkdown } from "./chunk.js";
import { measureFor } from "./markdown/measure.js";
import { Outbound } from "./outbound.js";
import { editInterval, type RenderHooks } from "./types.js";

/** Posts a short notice (busy, restarted, command output, errors) — chunked, 429-retried. */
export function sendNotice(
  channel: Channel,
  ref: ConversationRef,
  markdown: string,
  hooks: RenderHooks = {},
): Promise<MessageHandle[]> {
  return postChunked(new Outbound(channel, hooks, editInterval(channel, ref)), ref, { text: markdown });
}

/**
 * Posts `content`, split where the converted text fits the length limit; buttons go on the last chunk. Every chunk is
 * delivered or this throws. Calls after the first keep the channel's interval.
 */
export async function postChunked(out: Outbound, ref: ConversationRef, content: OutboundContent): Promise<MessageHandle[]> {
  const { channel } = out;
  const { maxTextLength, markdown } = channel.capabilities;
  const chunks = splitMarkdown(content.text, maxTextLength, measureFor(markdown)).filter((c) => c.trim() !== "");
  const handles: MessageHandle[] = [];
  for (const [i, text] of chunks.entries()) {
    const last = i === chunks.length - 1;
    const part: OutboundContent = last ? { ...content, text } : { text };
    const paced = out.lastCallAt > Number.NEGATIVE_INFINITY;
    const handle = await out.deliver("send", () => channel.send(ref, part), paced);
    if (handle) handles.push(handle);
  }
  return handles;
}
