/**
 * `/stop` between replicas, so that it cannot be lost. The replica that receives a `/stop` for a
 * conversation another replica is answering writes a request for that replica into the store
 * (`antler_stop_requests`), then broadcasts it. The owner applies it from whichever reaches it
 * first:
 *
 * - the broadcast, at once, when its listening connection is up;
 * - the store, when that connection is back after a drop (the broadcast was missed), and on every
 *   heartbeat while it holds a conversation lease (a listening connection that went silent
 *   without an error hears nothing and never reconnects).
 *
 * Each request is taken from the store by one `DELETE … RETURNING`, so it is read once. Applied
 * late, it stops only a reply that had begun before the request was made (its age is measured on
 * the database's clock, the reply's on the owner's), never a later one; and after
 * {@link STOP_REQUEST_TTL_MS} it is dropped unread.
 */
import pg from "pg";
import type { Logger } from "../log/logger.js";
import type { Coordinator } from "./coordinator.js";

/** A request its replica has not read by then is dropped: the user has moved on. */
export const STOP_REQUEST_TTL_MS = 60_000;

/** What a replica does with a request: stop the conversation's reply if it began more than `madeMsAgo` ago. */
export type ApplyStop = (key: string, madeMsAgo: number) => void;

export interface StopRequestsOptions {
  logger: Logger;
  apply: ApplyStop;
  /** How often the store is read while this replica holds conversation leases; 0 = only after a reconnect. Default: the heartbeat. */
  pollMs?: number;
}

interface StopNotice {
  tenant?: unknown;
  key?: unknown;
  id?: unknown;
  replica?: unknown;
}

export class StopRequests {
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly options: StopRequestsOptions,
  ) {}

  /**
   * Asks the replica holding the conversation's lease to stop its reply. False when no other live
   * replica holds it (nothing to ask).
   */
  async send(tenant: string, key: string): Promise<boolean> {
    const c = this.coordinator;
    const [t, k, me] = [tenant, key, c.id].map(quote);
    const [row] = await c.asTenant<{ id: string; replica: string }>(
      tenant,
      `DELETE FROM antler_stop_requests WHERE tenant = ${t} AND expires_at < now();
       INSERT INTO antler_stop_requests (tenant, key, replica, requested_by, expires_at)
         SELECT tenant, key, replica, ${me}, now() + ${STOP_REQUEST_TTL_MS} * interval '1 millisecond'
         FROM antler_conversation_leases
         WHERE tenant = ${t} AND key = ${k} AND replica <> ${me} AND expires_at > now()
         RETURNING id, replica`,
    );
    if (!row) return false;
    // Stored first: a broadcast that does not arrive leaves the request for the owner to read.
    await c.broadcast("stop", { tenant, key, id: row.id, replica: row.replica }).catch((err: unknown) => {
      this.options.logger.warn({ err, key }, "could not broadcast a stop request; its replica reads it from the store");
    });
    return true;
  }

  /** Listens for requests: broadcasts, the store after a reconnect, and the store on a timer. */
  start(): void {
    const c = this.coordinator;
    c.on("stop", (data) => this.heard(data as StopNotice));
    c.onRelisten(() => this.readSoon());
    const every = this.options.pollMs ?? c.heartbeatMs;
    if (every > 0) {
      this.timer = setInterval(() => this.readSoon(), every);
      this.timer.unref();
    }
  }

  /** Stops reading; waits for a read under way. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.reading.catch(() => undefined);
  }

  /** A broadcast: applied at once, then taken from the store so it is not applied again. */
  private heard(notice: StopNotice): void {
    const { tenant, key, id, replica } = notice;
    if (typeof key !== "string") return;
    // Meant for another replica (a broadcast from an older version names none: every replica tries).
    if (replica !== undefined && replica !== this.coordinator.id) return;
    this.options.apply(key, 0);
    if (typeof tenant !== "string" || typeof id !== "string") return;
    this.coordinator
      .asTenant(tenant, `DELETE FROM antler_stop_requests WHERE tenant = ${quote(tenant)} AND id = ${quote(id)}`)
      .catch((err: unknown) => this.options.logger.debug({ err, key }, "could not clear a stop request; it expires"));
  }

  private readSoon(): void {
    if (this.closed) return;
    this.reading = this.reading.then(() => this.read());
  }

  /** Takes this replica's requests from the store, for every tenant it holds a conversation of now, and applies them. */
  private async read(): Promise<void> {
    const c = this.coordinator;
    for (const tenant of c.heldTenants()) {
      if (this.closed) return;
      try {
        const [t, me] = [tenant, c.id].map(quote);
        const rows = await c.asTenant<{ key: string; mine: boolean; live: boolean; age_ms: number }>(
          tenant,
          `DELETE FROM antler_stop_requests WHERE tenant = ${t} AND (replica = ${me} OR expires_at < now())
           RETURNING key, replica = ${me} AS mine, expires_at > now() AS live,
             (EXTRACT(EPOCH FROM (now() - requested_at)) * 1000)::float8 AS age_ms`,
        );
        for (const row of rows) if (row.mine && row.live) this.options.apply(row.key, Math.max(0, row.age_ms));
      } catch (err) {
        this.options.logger.warn({ err, tenant }, "could not read stop requests; trying again");
      }
    }
  }
}

/** A value as an SQL literal: `asTenant` runs several statements at once, which take no parameters. */
function quote(value: string): string {
  return pg.escapeLiteral(value);
}
