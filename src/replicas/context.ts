/**
 * What every part of the replica coordinator shares: the pool of the replicas' tables, this
 * replica's id, its timings, its log, and whether it has closed (each part stops working then).
 */
import type pg from "pg";
import type { Logger } from "../log/logger.js";
import type { ReplicaTiming } from "./timing.js";

export interface ReplicaContext {
  readonly pool: pg.Pool;
  /** This replica's id; unique per process. */
  readonly id: string;
  readonly timing: ReplicaTiming;
  readonly logger: Logger;
  /** True once the coordinator closed or halted. */
  closed(): boolean;
}
