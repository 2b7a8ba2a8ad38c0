/**
 * What the admin routes read from the gateway (`AdminSource`) and how they are configured
 * (`AdminOptions`): the channels' reports, the agents' statuses, the replicas, the metrics.
 */
import type { ChannelReport } from "../channels/registry.js";
import type { Speaker } from "../core/outbox/index.js";
import type { McpServerReport } from "../harness/mcp/index.js";
import type { AgentStatus } from "../harness/types.js";
import type { ReplicaInfo } from "../replicas/coordinator.js";
import type { AdminTokens } from "./admin-caller.js";
import type { GatewayMetrics } from "./metrics.js";

export interface AdminSource {
  reports(): ChannelReport[];
  report(name: string): ChannelReport | undefined;
  restart(name: string): Promise<ChannelReport | undefined>;
  /** State and tools of each tenant's MCP servers; empty until the agents are up. */
  mcpReports(): (McpServerReport & { tenant: string })[];
  /** The default agent's backend and whether it answers; `probe` checks now. Undefined until the agents are up. */
  agentStatus(probe?: boolean): Promise<AgentStatus | undefined>;
  /** Every agent instance (tenant × agent) with its status. */
  agentStatuses(probe?: boolean): Promise<TenantAgentStatus[]>;
  /** The tenant a channel belongs to. */
  tenantOf(channel: string): string;
  /** The live gateway replicas sharing the store (just this one on SQLite), with the channels each leads. */
  replicas(): Promise<ReplicaInfo[]>;
  readonly metrics: GatewayMetrics;
  readonly startedAt: number;
  /** The outbox and the schedules (send API, schedules API); undefined until the gateway has started. */
  readonly speaker: Speaker | undefined;
}

export type TenantAgentStatus = AgentStatus & { tenant: string; agent: string };

export interface AdminOptions extends AdminTokens {
  version: string;
}
