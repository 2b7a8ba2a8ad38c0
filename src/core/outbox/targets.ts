/** Where an outbox entry goes, as a ref its channel can post to. */
import type { BindingStore } from "../../bindings/types.js";
import type { Channel, ConversationRef, SendTarget } from "../../channels/types.js";
import { AntlerError, TargetUnreachableError } from "../../errors.js";
import { messageFromJson } from "../stored.js";
import type { OutboxTarget } from "./payload.js";

/** The ref a conversation was last reached by, without the quote of the message it answered then. */
export async function refOfKey(store: BindingStore, channel: string, key: string): Promise<ConversationRef> {
  const last = await store.lastInbound(key);
  if (!last || last.channel !== channel) {
    throw new TargetUnreachableError(
      channel,
      `no message from conversation ${key} was ever received, so there is nowhere to post`,
    );
  }
  const { replyToId: _quote, ...ref } = messageFromJson(last.payload).ref;
  return ref;
}

/** Asks the channel to turn a chat or a person into a ref; a channel that cannot says so. */
export function resolveSpec(channel: Channel, spec: SendTarget): Promise<ConversationRef> {
  if (!channel.resolveTarget) {
    throw new AntlerError(
      "not_supported",
      `channel ${channel.name} cannot send first to a chat or a user; name a conversation by its key instead`,
    );
  }
  return channel.resolveTarget(spec);
}

export function resolveTarget(target: OutboxTarget, channel: Channel, store: BindingStore): Promise<ConversationRef> {
  if ("ref" in target) return Promise.resolve(target.ref);
  if ("key" in target) return refOfKey(store, channel.name, target.key);
  return resolveSpec(channel, target.spec);
}
