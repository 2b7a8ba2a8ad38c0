/**
 * Membership: who the live replicas are.
 */
import { hostname } from "node:os";
import type { ReplicaInfo } from "./coordinator.js";

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
