/** Shared set-up for renderer tests: a loopback world, scripted runs, and a slow-platform wrapper. */

import type { Channel, ConversationRef, HttpMount, MessageHandle, OutboundContent } from "../../src/channels/types.js";
import { renderRun } from "../../src/core/render/index.js";
import type { RenderHooks, RenderOptions, RenderOutcome } from "../../src/core/render/types.js";
import type { RunEvent } from "../../src/harness/types.js";
import { silentLogger } from "../../src/log/logger.js";
import { LoopbackChannel, type LoopbackOptions, LoopbackWorld } from "../fakes/loopback.js";

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const noHttp: HttpMount = {
  route() {
    throw new Error("the loopback channel mounts no routes");
  },
  unroute() {},
};

export function loopback(options: LoopbackOptions = {}): {
  world: LoopbackWorld;
  channel: LoopbackChannel;
  ref: ConversationRef;
} {
  const world = new LoopbackWorld(options);
  const channel = new LoopbackChannel({
    name: "loop",
    config: { world: world.id },
    logger: silentLogger(),
    http: noHttp,
    baseDir: ".",
  });
  const ref: ConversationRef = { channel: "loop", key: "loop:w:dm1", chatId: "dm1", chatType: "direct" };
  return { world, channel, ref };
}

/** A scripted run: what it yielded and when, so tests can compare with what users saw. */
export class Script {
  /** The reply text after each delta, with the time it was yielded. */
  readonly snapshots: Array<{ at: number; text: string }> = [];
  startedAt = 0;
  text = "";

  constructor(
    private readonly parts: string[],
    private readonly options: {
      gapMs?: number;
      firstDelayMs?: number;
      end?: RunEvent;
      beforeEnd?: () => void;
      throwAtEnd?: Error;
    } = {},
  ) {}

  async *events(): AsyncGenerator<RunEvent> {
    this.startedAt = Date.now();
    if (this.options.firstDelayMs) await sleep(this.options.firstDelayMs);
    for (const [i, delta] of this.parts.entries()) {
      if (i > 0 && this.options.gapMs) await sleep(this.options.gapMs);
      this.text += delta;
      this.snapshots.push({ at: Date.now(), text: this.text });
      yield { type: "text", delta };
    }
    this.options.beforeEnd?.();
    if (this.options.throwAtEnd) throw this.options.throwAtEnd;
    yield this.options.end ?? { type: "done", text: this.text };
  }
}

/** Splits `text` into deltas of `size` characters. */
export function deltas(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export interface HookLog {
  hooks: RenderHooks;
  outbound: string[];
  rateLimited: number[];
  errors: unknown[];
  firstVisible: number[];
}

export function hookLog(): HookLog {
  const log: HookLog = { outbound: [], rateLimited: [], errors: [], firstVisible: [], hooks: {} };
  log.hooks = {
    onOutbound: (kind) => log.outbound.push(kind),
    onRateLimited: (ms) => log.rateLimited.push(ms),
    onError: (err) => log.errors.push(err),
    onFirstVisible: () => log.firstVisible.push(Date.now()),
  };
  return log;
}

export function render(
  channel: Channel,
  ref: ConversationRef,
  script: Script,
  hooks?: RenderHooks,
  options: Partial<RenderOptions> = {},
): Promise<RenderOutcome> {
  return renderRun(script.events(), {
    channel,
    ref,
    logger: silentLogger(),
    questionId: "q1",
    ...(hooks ? { hooks } : {}),
    ...options,
  });
}

/**
 * The same platform with network latency: each send/edit reaches the platform at once but
 * answers `latencyMs` later. Records how many calls were in flight at the same time.
 */
export class SlowChannel implements Channel {
  inFlight = 0;
  maxInFlight = 0;
  readonly name: string;
  readonly capabilities: Channel["capabilities"];

  constructor(
    private readonly inner: LoopbackChannel,
    private readonly latencyMs: number,
  ) {
    this.name = inner.name;
    this.capabilities = inner.capabilities;
  }

  start = (sink: Parameters<Channel["start"]>[0]) => this.inner.start(sink);
  stop = () => this.inner.stop();
  status = () => this.inner.status();

  send(ref: ConversationRef, content: OutboundContent): Promise<MessageHandle> {
    return this.slow(() => this.inner.send(ref, content));
  }

  edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    return this.slow(() => this.inner.edit(handle, content));
  }

  private async slow<T>(fn: () => Promise<T>): Promise<T> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const result = await fn();
      await sleep(this.latencyMs);
      return result;
    } finally {
      this.inFlight--;
    }
  }
}

/** Bot messages' final texts, oldest first. */
export function finalTexts(world: LoopbackWorld): string[] {
  return world.botMessages().map((m) => m.text);
}
