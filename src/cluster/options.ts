/** `ClusterOptions` checked and completed with defaults; a bad value fails `Cluster.open` by name. */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { z } from "zod";
import { type Logger, silentLogger } from "../log/logger.js";
import { ClusterError } from "./errors.js";
import type { ClusterOptions } from "./types.js";

const ms = z.number().int().positive();

const schema = z
  .object({
    replicaId: z.string().min(1).max(200).optional(),
    adminUrl: z.string().optional(),
    heartbeatMs: ms.default(2_000),
    deadAfterMs: ms.default(10_000),
    leaderTtlMs: ms.default(6_000),
    conversationTtlMs: ms.default(6_000),
    pollMs: ms.default(150),
    // It is written into LISTEN as an identifier, so only plain lower-case names.
    notifyChannel: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, "a lower-case SQL identifier")
      .default("antler_cluster"),
  })
  .refine((o) => o.leaderTtlMs > o.heartbeatMs, { message: "must be longer than heartbeatMs", path: ["leaderTtlMs"] })
  .refine((o) => o.conversationTtlMs > o.heartbeatMs, { message: "must be longer than heartbeatMs", path: ["conversationTtlMs"] })
  .refine((o) => o.deadAfterMs > o.heartbeatMs, { message: "must be longer than heartbeatMs", path: ["deadAfterMs"] });

export interface ResolvedOptions extends Omit<z.output<typeof schema>, "replicaId"> {
  replicaId: string;
  logger: Logger;
}

export function resolveOptions(options: ClusterOptions): ResolvedOptions {
  const { logger, ...rest } = options;
  const parsed = schema.safeParse(rest);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ClusterError("cluster_options", `invalid options: ${issues}`);
  }
  return {
    ...parsed.data,
    replicaId: parsed.data.replicaId ?? defaultReplicaId(),
    logger: logger ?? silentLogger(),
  };
}

function defaultReplicaId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}
