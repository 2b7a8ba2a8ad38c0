/**
 * A channel as the pipeline sees it, built once per channel and handed along a message's path:
 * its slot, its channel instance, its tenant and the view of the store limited to that tenant's
 * rows, the render hooks that report its platform calls, its observer events, and how a notice
 * reaches one of its chats.
 */
import type { BindingStore } from "../bindings/types.js";
import type { ChannelSlot } from "../channels/registry.js";
import type { AccessRules, Channel, ConversationRef } from "../channels/types.js";
import type { Logger } from "../log/logger.js";
import type { Conversations } from "./conversations.js";
import { type ChannelEvents, channelEvents, type DispatcherObserver } from "./observer.js";
import { type RenderHooks, sendNotice } from "./render/index.js";
import { postChunked } from "./render/notice.js";
import { Outbound } from "./render/outbound.js";
import { editInterval } from "./render/types.js";

export class ChannelScope {
  readonly name: string;
  readonly tenant: string;
  /** The store's view of this channel's tenant. */
  readonly store: BindingStore;
  readonly events: ChannelEvents;

  constructor(
    readonly slot: ChannelSlot,
    conversations: Conversations,
    observer: DispatcherObserver | undefined,
    private readonly logger: Logger,
  ) {
    this.name = slot.name;
    ({ tenant: this.tenant, store: this.store } = conversations.scopeOf(slot.name));
    this.events = channelEvents(slot, observer);
  }

  /** The channel instance running now (a replica renewing the channel replaces it). */
  get channel(): Channel {
    const channel = this.slot.channel;
    if (!channel) throw new Error(`channel ${this.name} is not loaded`);
    return channel;
  }

  /** The access rules the pipeline enforces for this channel. */
  get access(): AccessRules {
    return this.slot.access;
  }

  /** Notes a platform or handling error on the channel's status. */
  noteError(err: unknown): void {
    this.slot.noteError(err);
  }

  /** Posts a notice; a failure is noted and logged, and thrown only with `rethrow`. */
  async notify(ref: ConversationRef, text: string, rethrow = false): Promise<void> {
    try {
      await sendNotice(this.channel, ref, text, this.hooks());
    } catch (err) {
      this.noteError(err);
      this.logger.error({ err, channel: this.name }, "could not send a notice");
      if (rethrow) throw err;
    }
  }

  /** Posts Markdown the pipeline wrote (a list with ids), split where it is too long; a failure is noted and logged. */
  async post(ref: ConversationRef, markdown: string): Promise<void> {
    try {
      await postChunked(new Outbound(this.channel, this.hooks(), editInterval(this.channel, ref)), ref, { text: markdown });
    } catch (err) {
      this.noteError(err);
      this.logger.error({ err, channel: this.name }, "could not send a command's answer");
    }
  }

  /** The hooks a render of this channel reports to; with `runStarted`, the first visible text is timed from it. */
  hooks(runStarted?: number): RenderHooks {
    const { events, slot } = this;
    return {
      onOutbound: (kind) => {
        slot.lastOutboundAt = Date.now();
        events.apiCall(kind);
      },
      onRateLimited: () => {
        events.rateLimited();
        events.apiError("rate_limited");
      },
      onFirstVisible: () => {
        if (runStarted !== undefined) events.firstVisible((Date.now() - runStarted) / 1000);
      },
      onError: (err) => {
        this.noteError(err);
        events.apiError((err as { code?: string }).code ?? "unknown");
      },
    };
  }
}

/** The scope of each channel, built on first use. */
export class Scopes {
  private readonly built = new WeakMap<ChannelSlot, ChannelScope>();

  constructor(
    private readonly conversations: Conversations,
    private readonly observer: DispatcherObserver | undefined,
    private readonly logger: Logger,
  ) {}

  of(slot: ChannelSlot): ChannelScope {
    let scope = this.built.get(slot);
    if (!scope) {
      scope = new ChannelScope(slot, this.conversations, this.observer, this.logger);
      this.built.set(slot, scope);
    }
    return scope;
  }
}
