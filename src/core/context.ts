/**
 * What every room of the pipeline shares: the dispatcher's options, the conversations, the
 * per-conversation queue and the global run limit, the messages in progress, whether the gateway
 * still accepts work, and the work it runs outside the queues (so `idle` can wait for it).
 */

import type { BindingStore } from "../bindings/types.js";
import type { GatewayConfig } from "../config/schema.js";
import type { Logger } from "../log/logger.js";
import type { MediaDesk } from "../media/desk.js";
import type { Router } from "../routing/index.js";
import type { ScheduleLimits } from "../schedules/book.js";
import { ActiveRuns } from "./active-runs.js";
import { type AgentSource, Conversations } from "./conversations.js";
import { TurnBoard } from "./followups/board.js";
import type { DispatcherObserver } from "./observer.js";
import { KeyedQueue, Semaphore } from "./queue.js";

export interface DispatcherOptions {
  /** The store; each channel reads and writes through the view of its tenant's rows. */
  store: BindingStore;
  agents: AgentSource;
  /** Picks the tenant and agent of a chat. */
  router: Router;
  logger: Logger;
  settings: GatewayConfig;
  observer?: DispatcherObserver;
  /** Takes attachments in and posts the agent's files out; without it, messages are text only. */
  media?: MediaDesk;
  /**
   * Set when several gateway replicas share the store (PostgreSQL): conversations are then run
   * under a lease that only one replica holds at a time, in the order the store recorded their
   * messages, whichever replica received them.
   */
  replicas?: ReplicaCoordinator;
  /** The limits on schedules people and agents make (`schedules:`); defaults when absent. */
  scheduleLimits?: ScheduleLimits;
  /** Hides configured secret values (the logs' scrubber) in what replies show of the agent's work. */
  scrub?: (text: string) => string;
}

/** What the dispatcher needs from the replica coordination (src/replicas). */
export interface ReplicaCoordinator {
  /** Runs `work` while this replica holds the conversation's lease, waiting while another holds it. */
  withConversation<T>(tenant: string, key: string, work: (lost: AbortSignal) => Promise<T>): Promise<T>;
  /** Whether another live replica holds the conversation's lease now (it is running a message there). */
  heldElsewhere(tenant: string, key: string): Promise<boolean>;
  /** Asks every other replica to stop the conversation's running reply. */
  stopElsewhere(tenant: string, key: string): Promise<void>;
}

export class CoreContext {
  readonly logger: Logger;
  readonly settings: GatewayConfig;
  readonly conversations: Conversations;
  readonly queue: KeyedQueue;
  readonly runs: Semaphore;
  readonly active = new ActiveRuns();
  /** The turns running now, as the follow-up modes see them (followups/). */
  readonly board = new TurnBoard();
  /** Each conversation's `/queue` pick once read (`null`: none), by tenant and key (followups/settings.ts). */
  readonly queuePicks = new Map<string, string | null>();
  /** Conversations whose leftovers from a previous process are being answered (recovery-hold.ts): new messages there only queue. */
  readonly holding = new Set<string>();
  /** False once shutdown began: no new message is taken and no new run starts. */
  accepting = true;
  private readonly background = new Set<Promise<void>>();

  constructor(readonly options: DispatcherOptions) {
    this.logger = options.logger;
    this.settings = options.settings;
    this.queue = new KeyedQueue(options.settings.queue_size, (err) => options.logger.error({ err }, "queued job failed"));
    this.runs = new Semaphore(options.settings.max_concurrent_runs);
    this.conversations = new Conversations(options);
  }

  /** Work outside the conversation queues (commands that answer at once, notices), so `idle` can wait for it. */
  inBackground(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => this.logger.error({ err }, "background work failed"));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }

  /** Resolves when every queued and running message, command and notice is finished. */
  async idle(): Promise<void> {
    for (;;) {
      await this.queue.whenIdle();
      if (this.background.size === 0 && this.queue.depth === 0) return;
      await Promise.allSettled([...this.background]);
    }
  }
}
