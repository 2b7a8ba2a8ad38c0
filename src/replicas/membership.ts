/**
 * Membership: who the live replicas are. Each process has a row in `antler_replicas` it
 * refreshes every heartbeat; one whose row is older than `deadAfterMs` (or that said goodbye) is
 * dead, and the others take over its unfinished work.
 */
import { hostname } from "node:os";
import type { ReplicaContext } from "./context.js";

/** One live replica, as `/api/replicas` shows it. */
export interface ReplicaInfo {
  id: string;
  host: string;
  pid: number;
  url: string | null;
  started_at: string;
  heartbeat_at: string;
  /** Channels it leads now. */
  leads: string[];
}

export class Membership {
  constructor(
    private readonly context: ReplicaContext,
    /** Where this replica's admin API answers, for `/api/replicas`. */
    private readonly url: string | undefined,
  ) {}

  /** Registers this replica (again, after a restart with the same id); resolves to the schema the tables are in. */
  async register(): Promise<string> {
    const { pool, id } = this.context;
    const { rows } = await pool.query<{ schema: string }>("SELECT current_schema() AS schema");
    await pool.query(
      `INSERT INTO antler_replicas (id, host, pid, url) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), stopped_at = NULL, url = EXCLUDED.url`,
      [id, hostname(), process.pid, this.url ?? null],
    );
    return rows[0]?.schema ?? "";
  }

  /** This replica's heartbeat: its row is fresh again. */
  async beat(): Promise<void> {
    await this.context.pool.query("UPDATE antler_replicas SET heartbeat_at = now(), stopped_at = NULL WHERE id = $1", [
      this.context.id,
    ]);
  }

  /** Marks this replica stopped (the others count it dead at once), and forgets replicas stopped a day ago. */
  async goodbye(): Promise<void> {
    await this.context.pool.query("UPDATE antler_replicas SET stopped_at = now() WHERE id = $1", [this.context.id]);
    await this.context.pool.query("DELETE FROM antler_replicas WHERE stopped_at < now() - interval '1 day'");
  }

  /** The live replicas, oldest first, with the channels each leads. */
  async replicas(): Promise<ReplicaInfo[]> {
    const { rows } = await this.context.pool.query<{
      id: string;
      host: string;
      pid: number;
      url: string | null;
      started_at: Date;
      heartbeat_at: Date;
      leads: string[] | null;
    }>(
      `SELECT r.id, r.host, r.pid, r.url, r.started_at, r.heartbeat_at,
         array_remove(array_agg(l.channel ORDER BY l.channel), NULL) AS leads
       FROM antler_replicas r
       LEFT JOIN antler_channel_leases l ON l.replica = r.id AND l.expires_at > now()
       WHERE r.stopped_at IS NULL AND r.heartbeat_at > now() - $1 * interval '1 millisecond'
       GROUP BY r.id ORDER BY r.started_at, r.id`,
      [this.context.timing.deadAfterMs],
    );
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      url: r.url,
      started_at: r.started_at.toISOString(),
      heartbeat_at: r.heartbeat_at.toISOString(),
      leads: r.leads ?? [],
    }));
  }
}

/** This process as the one replica there is (a gateway on SQLite shares its store with no one). */
export function soleReplica(id: string, startedAt: number, url: string | null, leads: string[]): ReplicaInfo {
  return {
    id,
    host: hostname(),
    pid: process.pid,
    url,
    started_at: new Date(startedAt).toISOString(),
    heartbeat_at: new Date().toISOString(),
    leads,
  };
}
