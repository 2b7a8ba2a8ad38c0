/**
 * What the gateway builds between its store and its channels: every tenant's agents (built now,
 * so a broken one fails the start), the dispatcher that drives them, each tenant's view of the
 * store, and the speaker that sends on Antler's own initiative.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { BindingStore } from "./bindings/types.js";
import type { ChannelSlot } from "./channels/registry.js";
import { DEFAULT_TENANT, type Tenancy } from "./config/agents.js";
import type { LoadedConfig } from "./config/loader.js";
import type { ChannelSection } from "./config/schema.js";
import { Dispatcher, type DispatcherObserver, type ReplicaCoordinator } from "./core/dispatcher.js";
import type { Speaker } from "./core/outbox/index.js";
import { openSpeaker } from "./core/outbox/open.js";
import { AgentDirectory } from "./harness/directory.js";
import type { Harness } from "./harness/types.js";
import type { Logger } from "./log/logger.js";
import { openMedia } from "./media/setup.js";
import type { GatewayMetrics } from "./ops/metrics.js";
import { Router } from "./routing/index.js";
import { booksOf } from "./schedules/book.js";
import { scheduleLimits } from "./schedules/from-config.js";
import { scheduleTools } from "./schedules/tools.js";

export interface CoreInput {
  loaded: Pick<LoadedConfig, "config" | "baseDir">;
  tenancy: Tenancy;
  channels: Record<string, ChannelSection>;
  store: BindingStore;
  logger: Logger;
  metrics: GatewayMetrics;
  observer?: DispatcherObserver;
  harness?: Harness;
  tools?: StructuredToolInterface[];
  clock?: () => number;
  /** Hides configured secrets in what replies show of the agent's work. */
  scrub: (text: string) => string;
  replicas?: ReplicaCoordinator;
  owner: string;
  slots: () => ChannelSlot[];
}

export interface CoreParts {
  agents: AgentDirectory;
  dispatcher: Dispatcher;
  views: BindingStore[];
  speaker: Speaker;
}

export async function openCore(input: CoreInput): Promise<CoreParts> {
  const { config, baseDir } = input.loaded;
  const { logger, tenancy, store, clock } = input;
  const tenants = new Set([DEFAULT_TENANT]);
  for (const [name, section] of Object.entries(input.channels)) if (section.enabled) tenants.add(tenancy.tenantOfChannel(name));
  const media = openMedia(input.loaded, tenancy, logger);
  const limits = scheduleLimits(config.schedules);
  const views = tenancy.tenants().map((t) => (t === store.tenant ? store : store.forTenant(t)));
  const agents = await AgentDirectory.open(
    {
      config,
      baseDir,
      logger,
      harness: input.harness,
      tools: [
        ...media.tools,
        ...scheduleTools(
          booksOf(() => views, limits, clock),
          clock,
        ),
        ...(input.tools ?? []),
      ],
      onUsage: (who, usage) => input.metrics.usage(who, usage),
      files: media.files,
    },
    [...tenants],
  );
  const dispatcher = new Dispatcher({
    store,
    agents,
    router: new Router(config),
    logger,
    settings: config.gateway,
    observer: input.observer ?? input.metrics,
    media: media.desk,
    scheduleLimits: limits,
    scrub: input.scrub,
    ...(input.replicas ? { replicas: input.replicas } : {}),
  });
  const speaker = openSpeaker({
    config,
    owner: input.owner,
    dispatcher,
    slots: input.slots,
    views: () => views,
    hasAgent: (tenant, agent) => agents.serves(tenant, agent),
    logger,
    observer: input.metrics,
    ...(clock ? { now: clock } : {}),
  });
  return { agents, dispatcher, views, speaker };
}
