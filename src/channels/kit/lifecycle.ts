/**
 * One start/stop/status for every adapter. An adapter hands `start` an `open(signal)` function
 * that connects, and a `close()` that releases everything `open` may have made; this class does
 * the rest the same way for every platform:
 *
 * - a stop during start aborts the signal, releases at once, and the start rejects with a
 *   `ChannelError` coded `stopped` (the state is "stopped", not "failed");
 * - a start after stop connects again, once the aborted start has finished unwinding;
 * - a start while running (or starting) joins it; a double stop is a no-op;
 * - a start that throws leaves the state "failed" with its reason, and is released.
 *
 * It is also the channel's status tracker: the adapter reports `connected()` or
 * `degraded(reason)` as its connection comes and goes, and `noteError` for the last platform error.
 * It is the one record of the channel's last error and of its start: the core notes its own
 * errors here (`ChannelSlot.noteError`) and reads "starting", and a failed load or start, from
 * `startState()` (src/channels/registry.ts).
 */
import { ChannelError, errorMessage } from "../../errors.js";
import type { Channel, ChannelState, ChannelStatus, InboundSink } from "../types.js";

/** What `open` may say about the connection it made. */
export interface OpenResult {
  /** Set when the channel is up but not (yet) connected, e.g. a socket still retrying. */
  degraded?: string;
}

/** Connects under `signal`; see {@link ChannelLifecycle.start}. */
type Opener = (signal: AbortSignal) => Promise<OpenResult | undefined> | Promise<void>;

type Phase = "stopped" | "starting" | "up" | "failed";

const INTAKE_STOPPED = "not taking new messages: the channel is being handed over";
/** What a channel's report says while its start is under way. */
const STARTING = "connecting to the platform";

export class ChannelLifecycle {
  private phase: Phase = "stopped";
  /** The connection as last reported; `reason` set = degraded. */
  private link: { connected: boolean; reason?: string } | undefined;
  private failure: string | undefined;
  /** Whether `failure` ended a start (or the core could not load or start the channel), not a running channel. */
  private failedStarting = false;
  private lastError: { message: string; at: number } | null = null;
  private abort: AbortController | undefined;
  private starting: Promise<void> | undefined;
  /** The newest start or stop, settled or not: a new start waits until it has unwound. */
  private previous: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly channel: string,
    private readonly mode: string,
  ) {}

  /**
   * Runs `open` under a fresh abort signal. `close` releases what `open` made; it must be
   * idempotent, since a stop runs it at once and again when an aborted `open` returns.
   */
  start(open: Opener, close: () => Promise<void>): Promise<void> {
    if (this.starting) return this.starting;
    if (this.active) return Promise.resolve();
    const abort = new AbortController();
    this.abort = abort;
    this.opening();
    const run = this.run(open, close, abort.signal, this.previous);
    this.previous = run;
    const joined: Promise<void> = run.finally(() => {
      if (this.starting === joined) this.starting = undefined;
    });
    this.starting = joined;
    return joined;
  }

  /** Waits for the previous start or stop to unwind, then opens; a failed or aborted open is released. */
  private async run(open: Opener, close: () => Promise<void>, signal: AbortSignal, prior: Promise<unknown>): Promise<void> {
    await prior.catch(() => {});
    if (signal.aborted) throw this.stoppedError();
    try {
      const result = await open(signal);
      if (signal.aborted) throw this.stoppedError();
      this.phase = "up";
      if (result?.degraded) this.link = { connected: false, reason: result.degraded };
      // What the adapter reported while opening stands (a socket may already have dropped).
      this.link ??= { connected: true };
    } catch (err) {
      if (signal.aborted) {
        await close().catch(() => {});
        throw err instanceof ChannelError && err.code === "stopped" ? err : this.stoppedError();
      }
      this.abort = undefined;
      this.failed(err);
      this.failedStarting = true;
      await close().catch(() => {});
      throw err;
    }
  }

  /** Aborts a start under way and releases everything; a second stop does nothing more. */
  async stop(close: () => Promise<void>): Promise<void> {
    const abort = this.abort;
    this.abort = undefined;
    abort?.abort();
    this.starting = undefined;
    // A failed start stays "failed" (its reason is what an operator needs); anything else stops.
    if (this.phase !== "failed" || abort) this.phase = "stopped";
    this.link = undefined;
    const closing = close();
    // A start that comes while this one releases waits for it.
    this.previous = Promise.allSettled([this.previous, closing]);
    await closing;
  }

  /**
   * Intake stopped (see `Channel.stopIntake`): the channel is still up for sending but shows as
   * degraded, and what the adapter reports about its connection no longer changes that.
   */
  intakeStopped(): void {
    if (this.active) this.link = { connected: false, reason: INTAKE_STOPPED };
  }

  /** True between a start and a stop (also while starting). */
  get active(): boolean {
    return this.abort !== undefined && !this.abort.signal.aborted;
  }

  /** The connection is up. */
  connected(): void {
    if (this.active && !this.intakeIsStopped) this.link = { connected: true };
  }

  /** The channel is up but cannot receive right now (a dropped socket, a failing poll). */
  degraded(reason: string, connected = false): void {
    if (this.active && !this.intakeIsStopped) this.link = { connected, reason };
  }

  private get intakeIsStopped(): boolean {
    return this.link?.reason === INTAKE_STOPPED;
  }

  /** A failure that ends the channel until it is restarted (e.g. the token was revoked). */
  failed(err: unknown): void {
    this.phase = "failed";
    this.failedStarting = false;
    this.failure = errorMessage(err);
    this.link = undefined;
    this.noteError(err);
  }

  /** Remembers the last platform error for status. */
  noteError(err: unknown): void {
    this.lastError = { message: errorMessage(err), at: Date.now() };
  }

  /**
   * A start is under way. `start` says so itself; the core says so for a channel whose start this
   * lifecycle does not run (a channel class not built on it), and `opened` when it is up.
   */
  opening(): void {
    this.phase = "starting";
    this.link = undefined;
    this.failure = undefined;
    this.failedStarting = false;
  }

  /** The start the core reported with `opening` is done. */
  opened(): void {
    this.phase = "up";
  }

  /** The core could not load or start the channel: failed with `err`'s message until the next start. */
  startFailed(err: unknown): void {
    this.phase = "failed";
    this.failure = errorMessage(err);
    this.failedStarting = true;
    this.link = undefined;
  }

  /** Keeps a previous instance's last error, when this one has none yet (a channel restarted with a fresh instance). */
  inherit(lastError: { message: string; at: number } | null): void {
    this.lastError ??= lastError && { ...lastError };
  }

  /** While a start is under way, or after one failed: what the channel's report says then; else undefined. */
  startState(): { state: "starting" | "failed"; reason: string } | undefined {
    if (this.phase === "starting") return { state: "starting", reason: STARTING };
    if (this.phase === "failed" && this.failedStarting) return { state: "failed", reason: this.failure ?? "" };
    return undefined;
  }

  status(): ChannelStatus {
    const reason = this.phase === "failed" ? this.failure : this.phase === "up" ? this.link?.reason : undefined;
    return {
      state: this.state(),
      connected: this.phase === "up" && this.link?.connected === true,
      mode: this.mode,
      ...(reason ? { reason } : {}),
      lastError: this.lastError ? { ...this.lastError } : null,
    };
  }

  private state(): ChannelState {
    if (this.phase !== "up") return this.phase;
    return this.link?.reason ? "degraded" : "running";
  }

  private stoppedError(): ChannelError {
    return new ChannelError(this.channel, "stopped", "the channel was stopped before it finished starting");
  }
}

/**
 * The base of an adapter whose start, stop and status are a {@link ChannelLifecycle}: it writes
 * `open(sink, signal)` and an idempotent `close()`, and reports to `this.life` as its connection
 * comes and goes.
 */
export abstract class LifecycleChannel
  implements Pick<Channel, "name" | "start" | "stop" | "stopIntake" | "status" | "exclusive">
{
  /** The channel's instance name, the prefix of its conversation keys. */
  readonly name: string;
  /** One connection per bot (see `Channel.exclusive`). */
  readonly exclusive: boolean;
  protected readonly life: ChannelLifecycle;

  /** The lifecycle the core reads this channel's start and last error from (`lifecycleOf`). */
  get lifecycle(): ChannelLifecycle {
    return this.life;
  }

  constructor(name: string, mode: string, options: { exclusive?: boolean } = {}) {
    this.name = name;
    this.exclusive = options.exclusive ?? false;
    this.life = new ChannelLifecycle(name, mode);
  }

  start(sink: InboundSink): Promise<void> {
    return this.life.start(
      (signal) => this.open(sink, signal),
      () => this.close(),
    );
  }

  stop(): Promise<void> {
    return this.life.stop(() => this.close());
  }

  /** Stops the intake (see `Channel.stopIntake`); sending works until `stop`. */
  async stopIntake(): Promise<void> {
    // Still connecting: no reply has used it yet, and its intake may open after a close here.
    if (this.life.status().state === "starting") return this.stop();
    this.life.intakeStopped();
    await this.closeIntake();
  }

  status(): ChannelStatus {
    return this.life.status();
  }

  /** Connects (or mounts the webhook); a stop meanwhile aborts `signal`. */
  protected abstract open(sink: InboundSink, signal: AbortSignal): Promise<OpenResult | undefined> | Promise<void>;

  /** Releases everything `open` may have made; runs again when an aborted `open` returns. */
  protected abstract close(): Promise<void>;

  /**
   * Stops fetching inbound events and leaves the send path open; idempotent. By default the
   * whole channel closes: an adapter whose sends can outlive its intake overrides it.
   */
  protected closeIntake(): Promise<void> {
    return this.close();
  }
}

/** The channel's own lifecycle, when it is built on {@link LifecycleChannel}; else undefined. */
export function lifecycleOf(channel: Channel): ChannelLifecycle | undefined {
  return channel instanceof LifecycleChannel ? channel.lifecycle : undefined;
}
