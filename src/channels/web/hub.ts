/**
 * What the web chat's open pages listen to: per conversation, a numbered list of the events sent
 * to it (the last {@link REPLAY} of them, for a stream that reconnects) and the streams open on it.
 * Typing events go only to open streams; they mean nothing later.
 */

/** Events kept per conversation for replay. */
export const REPLAY = 200;
/** Conversations kept with nobody listening, at most; the idlest go first. */
const MAX_IDLE_CONVERSATIONS = 2000;

export type WebEventType = "message" | "edit" | "typing" | "file" | "user" | "reset";

export interface WebEvent {
  /** Sequence number in its conversation, counted from the process's start time; 0 for events that are not kept. */
  seq: number;
  type: WebEventType;
  data: Record<string, unknown>;
}

export type Listener = (event: WebEvent) => void;

interface Conversation {
  seq: number;
  events: WebEvent[];
  listeners: Set<Listener>;
}

export class Hub {
  private readonly conversations = new Map<string, Conversation>();
  /**
   * Where this process starts counting: its start time, so its numbers are larger than any an
   * earlier process gave, and a page that reconnects after a restart gets everything sent since.
   */
  private readonly base = Date.now();

  /** The newest sequence number of a conversation (the process's base before its first event). */
  seq(key: string): number {
    return this.conversations.get(key)?.seq ?? this.base;
  }

  /** Sends an event to the conversation's open streams, and keeps it for replay unless `transient`. */
  publish(key: string, type: WebEventType, data: Record<string, unknown>, transient = false): void {
    const conversation = this.touch(key);
    let event: WebEvent = { seq: 0, type, data };
    if (!transient) {
      event = { ...event, seq: ++conversation.seq };
      conversation.events.push(event);
      if (conversation.events.length > REPLAY) conversation.events.shift();
    }
    for (const listener of conversation.listeners) listener(event);
  }

  /**
   * Opens a stream: `listener` gets the events after `after` that are still kept (a `reset` event
   * when some of them are gone), then every new one. Returns the function that closes it.
   */
  subscribe(key: string, after: number | undefined, listener: Listener): () => void {
    const conversation = this.touch(key);
    if (after !== undefined && after !== conversation.seq) {
      // A number from before our base was counted by an earlier process, and one past ours by
      // this process before it forgot the conversation: everything kept here is new to that page.
      const from = after < this.base || after > conversation.seq ? this.base : after;
      const oldest = conversation.events[0]?.seq ?? conversation.seq + 1;
      if (from < oldest - 1) listener({ seq: 0, type: "reset", data: {} });
      else for (const event of conversation.events) if (event.seq > from) listener(event);
    }
    conversation.listeners.add(listener);
    return () => {
      conversation.listeners.delete(listener);
    };
  }

  /** Whether a page follows the conversation now. */
  listening(key: string): boolean {
    return (this.conversations.get(key)?.listeners.size ?? 0) > 0;
  }

  /** Forgets every stream (the channel stops). */
  clear(): void {
    this.conversations.clear();
  }

  private touch(key: string): Conversation {
    let conversation = this.conversations.get(key);
    if (conversation) {
      // Map order is the order of last use: the idlest conversations come first.
      this.conversations.delete(key);
    } else {
      conversation = { seq: this.base, events: [], listeners: new Set() };
      this.prune();
    }
    this.conversations.set(key, conversation);
    return conversation;
  }

  private prune(): void {
    if (this.conversations.size < MAX_IDLE_CONVERSATIONS) return;
    for (const [key, conversation] of this.conversations) {
      if (this.conversations.size < MAX_IDLE_CONVERSATIONS) return;
      if (conversation.listeners.size === 0) this.conversations.delete(key);
    }
  }
}
