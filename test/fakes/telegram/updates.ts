/**
 * The fake's update delivery: a queue of unconfirmed updates, served by getUpdates long polls
 * or pushed to a webhook (with the secret header, retried on any non-2xx), whichever is set.
 */

export type Update = { update_id: number } & Record<string, unknown>;

export interface WebhookTarget {
  url: string;
  secret?: string;
}

export interface DeliveryAttempt {
  update_id: number;
  status: number;
  at: number;
  /** What the webhook answered in its body (Telegraf may answer with a method call). */
  body: string;
}

interface Item {
  update: Update;
  /** A forced redelivery: served even though its id is below the confirmed offset. */
  force: boolean;
  sent: boolean;
}

export class UpdateQueue {
  private nextId = 500_000;
  private items: Item[] = [];
  private readonly waiters = new Set<() => void>();
  private webhookTarget: WebhookTarget | undefined;
  private delivering = false;
  private closed = false;
  readonly deliveries: DeliveryAttempt[] = [];
  /** Every update ever queued, in order. */
  readonly history: Update[] = [];
  /** How often each update_id was handed to the bot (getUpdates result or 2xx webhook). */
  private readonly handed = new Map<number, number>();

  constructor(
    /** Executes a method call found in a webhook's reply body. */
    private readonly onWebhookReply: (call: Record<string, unknown>) => Promise<void>,
    private readonly retryDelayMs: () => number,
  ) {}

  get webhook(): WebhookTarget | undefined {
    return this.webhookTarget;
  }

  get pendingCount(): number {
    return this.items.length;
  }

  push(body: Record<string, unknown>): Update {
    const update = { update_id: this.nextId++, ...body } as Update;
    this.history.push(update);
    this.enqueue({ update, force: false, sent: false });
    return update;
  }

  /** Delivers an update again with the same update_id, as Telegram does when it was not acknowledged. */
  redeliver(update: Update): void {
    this.enqueue({ update, force: true, sent: false });
  }

  /** getUpdates: confirms everything below `offset` and returns what is left. */
  take(offset: number, limit: number): Update[] {
    this.items = this.items.filter((i) => i.update.update_id >= offset || (i.force && !i.sent));
    const batch = this.items.slice(0, limit);
    for (const i of batch) {
      i.sent = true;
      this.countHanded(i.update.update_id);
    }
    return batch.map((i) => i.update);
  }

  /** Times `updateId` reached the bot so far. */
  handedCount(updateId: number): number {
    return this.handed.get(updateId) ?? 0;
  }

  private countHanded(updateId: number): void {
    this.handed.set(updateId, this.handedCount(updateId) + 1);
  }

  /** Resolves when an update arrives, after `ms`, or when the fake closes. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** Wakes every waiting poll, e.g. one another getUpdates just ended. */
  wake(): void {
    for (const w of [...this.waiters]) w();
  }

  setWebhook(target: WebhookTarget | undefined, dropPending = false): void {
    this.webhookTarget = target;
    if (dropPending) this.items = [];
    this.kick();
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.waiters]) w();
  }

  private enqueue(item: Item): void {
    this.items.push(item);
    for (const w of [...this.waiters]) w();
    this.kick();
  }

  private kick(): void {
    if (this.webhookTarget && !this.delivering && !this.closed) void this.deliverLoop();
  }

  /** Pushes queued updates to the webhook one at a time, in order, retrying each until a 2xx. */
  private async deliverLoop(): Promise<void> {
    this.delivering = true;
    try {
      while (!this.closed && this.webhookTarget && this.items.length > 0) {
        const item = this.items[0] as Item;
        const ok = await this.post(this.webhookTarget, item.update);
        if (ok) this.items = this.items.filter((i) => i !== item);
        else await new Promise((r) => setTimeout(r, this.retryDelayMs()));
      }
    } finally {
      this.delivering = false;
    }
  }

  private async post(target: WebhookTarget, update: Update): Promise<boolean> {
    let status = 0;
    let body = "";
    try {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (target.secret) headers["x-telegram-bot-api-secret-token"] = target.secret;
      const res = await fetch(target.url, { method: "POST", headers, body: JSON.stringify(update) });
      status = res.status;
      body = await res.text();
    } catch {
      status = 0;
    }
    this.deliveries.push({ update_id: update.update_id, status, at: Date.now(), body });
    if (status >= 200 && status < 300 && body.trim().startsWith("{")) {
      const call = JSON.parse(body) as Record<string, unknown>;
      if (typeof call.method === "string") await this.onWebhookReply(call);
    }
    const ok = status >= 200 && status < 300;
    if (ok) this.countHanded(update.update_id);
    return ok;
  }
}
