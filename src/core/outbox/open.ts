/** The speaker as a gateway builds it: over its channels' slots, its dispatcher and its store views. */
import type { BindingStore } from "../../bindings/types.js";
import type { ChannelSlot } from "../../channels/registry.js";
import type { OutboxConfig } from "../../config/outbox.js";
import type { Logger } from "../../log/logger.js";
import type { Dispatcher } from "../dispatcher.js";
import type { ChannelScope } from "../scope.js";
import { type NextFire, type OutboxObserver, Speaker } from "./index.js";

export interface OpenSpeakerOptions {
  owner: string;
  outbox: OutboxConfig;
  graceMs: number;
  callTimeoutMs: number;
  dispatcher: Dispatcher;
  slots: () => ChannelSlot[];
  views: () => BindingStore[];
  hasAgent: (tenant: string, agent: string) => boolean;
  nextFire: NextFire;
  logger: Logger;
  observer?: OutboxObserver & { scheduleFire?(result: string): void };
}

/** A channel delivers here when this replica runs it now (an exclusive channel's standby does not). */
function runsHere(scope: ChannelScope): boolean {
  if (!scope.slot.channel) return false;
  const state = scope.slot.report().state;
  return state === "running" || state === "degraded";
}

export function openSpeaker(o: OpenSpeakerOptions): Speaker {
  return new Speaker({
    owner: o.owner,
    outbox: o.outbox,
    graceMs: o.graceMs,
    callTimeoutMs: o.callTimeoutMs,
    logger: o.logger.child({ room: "outbox" }),
    nextFire: o.nextFire,
    scopes: () => o.slots().filter((s) => s.enabled).map((s) => o.dispatcher.scopeOf(s)),
    runsHere,
    submit: (scope, msg) => o.dispatcher.submit(scope, msg),
    hasAgent: o.hasAgent,
    views: o.views,
    ...(o.observer ? { observer: o.observer } : {}),
  });
}
