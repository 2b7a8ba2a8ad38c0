/**
 * Short messages outside a reply: busy, restarted, command output, errors. A notice is plain
 * text, never Markdown: what Antler writes into one (file names, types, names, a user's words)
 * must show as written, so it is escaped here, once, for whatever the channel renders.
 */

import { literalMarkdown } from "../../channels/markdown/literal.js";
import { measureFor } from "../../channels/markdown/measure.js";
import type { Channel, ConversationRef, MessageHandle, OutboundContent } from "../../channels/types.js";
import { splitMarkdown } from "./chunk.js";
import { Outbound } from "./outbound.js";
import { editInterval, type RenderHooks } from "./types.js";

/** Posts a short notice (busy, restarted, command output, errors) as plain text — chunked, 429-retried. */
export function sendNotice(
  channel: Channel,
  ref: ConversationRef,
  text: string,
  hooks: RenderHooks = {},
): Promise<MessageHandle[]> {
  return postChunked(new Outbound(channel, hooks, editInterval(channel, ref)), ref, { text: noticeMarkdown(channel, text) });
}

/**
 * The Markdown that shows `text` as written on `channel`. A channel of the `"plain"` format shows
 * Markdown as written, so the text goes unchanged; every other one renders it, so it is escaped.
 */
export function noticeMarkdown(channel: Channel, text: string): string {
  return channel.capabilities.markdown === "plain" ? text : literalMarkdown(text);
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
