/** The speaker as a gateway builds it: over its config, its channels' slots, its dispatcher and its store views. */
import type { BindingStore } from "../../bindings/types.js";
import type { ChannelSlot } from "../../channels/registry.js";
import type { AppConfig } from "../../config/schema.js";
import type { Logger } from "../../log/logger.js";
import { nextFireAfter } from "../../schedules/timing.js";
import type { Dispatcher } from "../dispatcher.js";
import type { ChannelScope } from "../scope.js";
import { type OutboxObserver, Speaker } from "./index.js";

export interface OpenSpeakerOptions {
  config: Pick<AppConfig, "outbox" | "schedules" | "gateway">;
  owner: string;
  dispatcher: Dispatcher;
  slots: () => ChannelSlot[];
  views: () => BindingStore[];
  hasAgent: (tenant: string, agent: string) => boolean;
  logger: Logger;
  observer?: OutboxObserver & { scheduleFire?(result: string): void };
  now?: () => number;
}

/** A channel delivers here when this replica runs it now (an exclusive channel's standby does not). */
function runsHere(scope: ChannelScope): boolean {
  if (!scope.slot.channel) return false;
  const state = scope.slot.report().state;
  return state === "running" || state === "degraded";
}

export function openSpeaker(o: OpenSpeakerOptions): Speaker {
  const { config } = o;
  return new Speaker({
    owner: o.owner,
    outbox: config.outbox,
    schedules: config.schedules,
    callTimeoutMs: config.gateway.platform_call_timeout_ms,
    logger: o.logger.child({ room: "outbox" }),
    nextFire: nextFireAfter,
    scopes: () =>
      o
        .slots()
        .filter((s) => s.enabled)
        .map((s) => o.dispatcher.scopeOf(s)),
    runsHere,
    submit: (scope, msg) => o.dispatcher.submit(scope, msg),
    hasAgent: o.hasAgent,
    views: o.views,
    ...(o.observer ? { observer: o.observer } : {}),
    ...(o.now ? { now: o.now } : {}),
  });
}
