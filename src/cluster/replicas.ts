/**
 * This replica's row in `antler_cluster_replicas`: registered at open, its heartbeat moved forward on
 * every tick, deleted on a graceful close. Liveness is "heartbeat newer than deadAfter by the
 * database's clock".
 */
import { hostname } from "node:os";
import type pg from "pg";
import type { ReplicaInfo } from "./types.js";

/** The query parameter `$n`, in milliseconds, as a PostgreSQL interval (for `now() ± …`). */
export function msInterval(n: number): string {
  return `($${n}::double precision * interval '1 millisecond')`;
}

export class ReplicaRegistry {
  constructor(
    private readonly pool: pg.Pool,
    readonly id: string,
    private readonly adminUrl: string | undefined,
    private readonly deadAfterMs: number,
  ) {}

  /** Inserts or refreshes this replica's row; a row another run left under the same id is taken over. */
  async register(): Promise<void> {
    await this.pool.query(
      `INSERT INTO antler_cluster_replicas (id, host, pid, admin_url, started_at, heartbeat_at)
       VALUES ($1, $2, $3, $4, now(), now())
       ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, admin_url = EXCLUDED.admin_url,
         started_at = EXCLUDED.started_at, heartbeat_at = EXCLUDED.heartbeat_at`,
      [this.id, hostname(), process.pid, this.adminUrl ?? null],
    );
  }

  /** Moves the heartbeat forward; re-registers when the row is gone (another replica forgot us while we were cut off). */
  async heartbeat(): Promise<void> {
    const { rowCount } = await this.pool.query("UPDATE antler_cluster_replicas SET heartbeat_at = now() WHERE id = $1", [
      this.id,
    ]);
    if (rowCount === 0) await this.register();
    // Leases of conversations nobody came back to stay behind when their holder died; sweep old ones.
    await this.pool.query("DELETE FROM antler_cluster_conversation_leases WHERE expires_at < now() - interval '1 minute'");
  }

  /** Live replicas, oldest first, with the channels each leads. */
  async live(): Promise<ReplicaInfo[]> {
    const { rows } = await this.pool.query<ReplicaRow>(
      `SELECT r.id, r.host, r.pid, r.admin_url, r.started_at, r.heartbeat_at,
         COALESCE(array_agg(l.channel ORDER BY l.channel) FILTER (WHERE l.channel IS NOT NULL), '{}') AS leads
       FROM antler_cluster_replicas r
       LEFT JOIN antler_cluster_channel_leases l ON l.replica = r.id AND l.expires_at > now()
       WHERE r.heartbeat_at > now() - ${msInterval(1)}
       GROUP BY r.id ORDER BY r.started_at, r.id`,
      [this.deadAfterMs],
    );
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      adminUrl: r.admin_url,
      startedAt: r.started_at,
      heartbeatAt: r.heartbeat_at,
      leads: r.leads,
    }));
  }

  /** Ids of registered replicas whose heartbeat stopped (crashed or cut off), oldest silence first. */
  async dead(): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM antler_cluster_replicas WHERE heartbeat_at <= now() - ${msInterval(1)} ORDER BY heartbeat_at, id`,
      [this.deadAfterMs],
    );
    return rows.map((r) => r.id);
  }

  /** Deletes a dead replica's row once its work was taken over; false if it is alive again (or gone). */
  async forget(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM antler_cluster_replicas WHERE id = $2 AND heartbeat_at <= now() - ${msInterval(1)}`,
      [this.deadAfterMs, id],
    );
    return (rowCount ?? 0) > 0;
  }

  /** Removes this replica's row and every lease it holds, in one transaction. */
  async unregister(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("DELETE FROM antler_cluster_channel_leases WHERE replica = $1", [this.id]);
      await client.query("DELETE FROM antler_cluster_conversation_leases WHERE replica = $1", [this.id]);
      await client.query("DELETE FROM antler_cluster_replicas WHERE id = $1", [this.id]);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

interface ReplicaRow {
  id: string;
  host: string;
  pid: number;
  admin_url: string | null;
  started_at: Date;
  heartbeat_at: Date;
  leads: string[];
}
