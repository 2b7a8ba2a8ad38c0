/**
 * The outbox worker: each replica claims, under a lease, the waiting entries of the channels it
 * runs, and delivers them: a `send` part by part (deliver.ts), a `run` as a turn handed to the
 * pipeline (recorded in the inbox as `outbox:<id>`, so it runs once whatever happens to this
 * replica) whose end it then waits for. A failed attempt is tried again with backoff up to
 * `outbox.retries`, then given up, with a short notice in the conversation.
 */
import type { OutboxEntry } from "../../bindings/outbox.js";
import type { BindingStore } from "../../bindings/types.js";
import type { ConversationRef, InboundMessage } from "../../channels/types.js";
import type { OutboxConfig } from "../../config/outbox.js";
import type { Logger } from "../../log/logger.js";
import type { ChannelScope } from "../scope.js";
import { deliverSend, LostHold } from "./deliver.js";
import { backoffMs, failureCode, failureReason, isPermanent, TARGET_GONE } from "./failures.js";
import { progressOf, runPayloadOf, scheduleOfSource, targetOf } from "./payload.js";
import { resolveTarget } from "./targets.js";

/** Who an API-started run acts for. */
export const API_USER = { id: "antler:api", name: "API" };
/** How often a replica waiting for a run's end looks at its inbox entry. */
const RUN_POLL_MS = 250;
const CLAIM_BATCH = 16;

export interface OutboxObserver {
  /** A delivery ended: `sent`, `failed`, or `retry` (it will be tried again); lag from acceptance. */
  delivery?(kind: "send" | "run", result: "sent" | "failed" | "retry", lagSeconds: number): void;
}

export interface WorkerDeps {
  owner: string;
  settings: OutboxConfig;
  callTimeoutMs: number;
  logger: Logger;
  now: () => number;
  /** The channels this replica runs now, as the pipeline sees them. */
  running: () => ChannelScope[];
  /** Hands a turn to the pipeline, as the channel's sink would. */
  submit: (scope: ChannelScope, msg: InboundMessage) => Promise<void>;
  /** An entry of a schedule failed because its target is gone: the schedule is disabled. */
  targetGone: (store: BindingStore, scheduleId: string, reason: string) => Promise<void>;
  observer?: OutboxObserver;
}

export class OutboxWorker {
  private readonly busy = new Set<string>();
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: WorkerDeps) {}

  /** Looks for work now; a call during a tick makes one more tick follow it. */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.ticking) {
      this.again = true;
      return this.ticking;
    }
    this.ticking = this.claimAll()
      .catch((err: unknown) => this.deps.logger.error({ err }, "outbox: could not claim entries"))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          void this.tick();
        }
      });
    return this.ticking;
  }

  stop(): void {
    this.stopped = true;
  }

  private async claimAll(): Promise<void> {
    const { deps } = this;
    for (const scopes of byTenant(deps.running())) {
      const store = (scopes[0] as ChannelScope).store;
      const names = scopes.map((s) => s.name);
      const claimed = await store.claimOutbound(deps.owner, names, deps.now(), deps.settings.lease_ms, CLAIM_BATCH);
      for (const entry of claimed) {
        const scope = scopes.find((s) => s.name === entry.channel);
        if (!scope || this.busy.has(entry.id)) continue;
        this.busy.add(entry.id);
        void this.deliver(entry, scope).finally(() => this.busy.delete(entry.id));
      }
    }
  }

  private async deliver(entry: OutboxEntry, scope: ChannelScope): Promise<void> {
    const { deps } = this;
    const { store } = scope;
    const attempts = entry.attempts + 1;
    if (!(await store.updateOutbound(entry.id, deps.owner, { attempts }))) return;
    let lost = false;
    const renew = setInterval(
      () => {
        const leaseUntil = deps.now() + deps.settings.lease_ms;
        void store.updateOutbound(entry.id, deps.owner, { leaseUntil }).then(
          (held) => {
            if (!held) lost = true;
          },
          () => undefined,
        );
      },
      Math.max(50, Math.floor(deps.settings.lease_ms / 3)),
    );
    let ref: ConversationRef | undefined;
    try {
      ref = progressOf(entry).ref ?? (await resolveTarget(targetOf(entry), scope.channel, store));
      if (entry.kind === "send") await this.send(entry, scope, ref);
      else await this.run(entry, scope, ref, () => lost);
    } catch (err) {
      await this.failed(entry, scope, attempts, err, ref);
    } finally {
      clearInterval(renew);
    }
  }

  private async send(entry: OutboxEntry, scope: ChannelScope, ref: ConversationRef): Promise<void> {
    const { deps } = this;
    const { ids, ref: posted } = await deliverSend(entry, {
      store: scope.store,
      owner: deps.owner,
      channel: scope.channel,
      ref,
      hooks: scope.hooks(),
      callTimeoutMs: deps.callTimeoutMs,
    });
    const done = await scope.store.updateOutbound(entry.id, deps.owner, {
      state: "sent",
      result: { ids, key: posted.key, chat: posted.chatId } as never,
      sentAt: deps.now(),
      error: null,
      errorCode: null,
    });
    if (done) this.observe(entry, "sent");
  }

  /** Hands the turn to the pipeline once (its inbox entry is the proof), then waits for its end. */
  private async run(entry: OutboxEntry, scope: ChannelScope, ref: ConversationRef, lost: () => boolean): Promise<void> {
    const { deps } = this;
    const { store } = scope;
    const eventId = `outbox:${entry.id}`;
    if (!(await store.getInbound(scope.name, eventId))) {
      const p = runPayloadOf(entry);
      if (!(await store.updateOutbound(entry.id, deps.owner, { state: "running" }))) throw new LostHold(entry.id);
      const origin = {
        kind: p.scheduleId ? ("schedule" as const) : ("api" as const),
        outboxId: entry.id,
        ...(p.thread ? { thread: p.thread } : {}),
        ...(p.agent ? { agent: p.agent } : {}),
        ...(p.scheduleId ? { scheduleId: p.scheduleId } : {}),
      };
      const user = p.user ?? API_USER;
      await deps.submit(scope, {
        channel: scope.name,
        eventId,
        ref,
        user,
        text: p.prompt,
        mentioned: true,
        sentAt: deps.now(),
        origin,
      });
    }
    for (;;) {
      const inbox = await store.getInbound(scope.name, eventId);
      if (inbox?.state === "done" || inbox?.state === "failed") {
        const ok = inbox.state === "done";
        const update = ok
          ? { state: "sent" as const, sentAt: deps.now(), result: { run: "done", key: ref.key } as never, error: null }
          : {
              state: "failed" as const,
              result: { run: "failed", key: ref.key } as never,
              error: inbox.error ?? "the run failed",
              errorCode: "run_failed",
            };
        if (await store.updateOutbound(entry.id, deps.owner, update)) this.observe(entry, ok ? "sent" : "failed");
        return;
      }
      if (lost() || this.stopped) return;
      await new Promise((resolve) => setTimeout(resolve, RUN_POLL_MS));
    }
  }

  /** Tried again later, or given up (permanent, or out of attempts) with a notice in the chat. */
  private async failed(
    entry: OutboxEntry,
    scope: ChannelScope,
    attempts: number,
    err: unknown,
    ref?: ConversationRef,
  ): Promise<void> {
    const { deps } = this;
    const { store } = scope;
    if (err instanceof LostHold) return void deps.logger.info({ id: entry.id }, "outbox: another replica holds the entry now");
    const code = failureCode(err);
    const reason = failureReason(err);
    const log = deps.logger.child({ channel: scope.name, id: entry.id, attempts, code });
    if (!isPermanent(err) && attempts < deps.settings.retries && !this.stopped) {
      log.warn({ err }, "outbox: delivery failed; trying again");
      const nextAttemptAt = deps.now() + backoffMs(deps.settings.retry_backoff_ms, attempts);
      if (await store.updateOutbound(entry.id, deps.owner, { state: "queued", nextAttemptAt, error: reason, errorCode: code })) {
        this.observe(entry, "retry");
      }
      return;
    }
    log.error({ err }, "outbox: delivery given up");
    if (!(await store.updateOutbound(entry.id, deps.owner, { state: "failed", error: reason, errorCode: code }))) return;
    this.observe(entry, "failed");
    const scheduleId = scheduleOfSource(entry.source);
    if (scheduleId && TARGET_GONE.has(code)) await deps.targetGone(store, scheduleId, reason);
    // Where the conversation can still be reached, it learns a message meant for it did not arrive.
    if (ref && !TARGET_GONE.has(code)) await scope.notify(ref, undeliveredNotice(entry, attempts));
  }

  private observe(entry: OutboxEntry, result: "sent" | "failed" | "retry"): void {
    this.deps.observer?.delivery?.(entry.kind, result, Math.max(0, this.deps.now() - entry.createdAt) / 1000);
  }
}

/** The notice for a message given up: what it was and how often it was tried, never the platform's error. */
export function undeliveredNotice(entry: OutboxEntry, attempts: number): string {
  const what = scheduleOfSource(entry.source) ? "A scheduled message" : "A message sent through Antler's API";
  const tries = attempts === 1 ? "" : ` (tried ${attempts} times)`;
  return `⚠️ ${what} could not be delivered here${tries}. The operator can see why in Antler's status.`;
}

/** Channels grouped by tenant: the store's outbox and schedules are read per tenant view. */
export function byTenant(scopes: ChannelScope[]): ChannelScope[][] {
  const groups = new Map<string, ChannelScope[]>();
  for (const scope of scopes) groups.set(scope.tenant, [...(groups.get(scope.tenant) ?? []), scope]);
  return [...groups.values()];
}
