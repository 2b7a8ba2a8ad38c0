/**
 * One way for every adapter to call its platform: the call's failure is mapped to Antler's typed
 * errors by the adapter's mapper (`map<Platform>Error(channel, err, what)`), and noted on the
 * channel's status (its lifecycle's `noteError`), so `last_error` means the same on every
 * platform.
 *
 * What does not count against the channel (see {@link countsAgainstChannel}): a call the core
 * stopped (`/stop`, a download's time limit; it rejects with the signal's reason), an edit that
 * changed nothing (`not_modified`), and a file over a size limit (`FileTooLargeError`, the
 * sender's file, not the platform's failure). A rate limit counts: the core waits it out, and the
 * status tells an operator why replies slowed down.
 */
import { type ChannelError, FileTooLargeError } from "../../errors.js";
import type { ChannelLifecycle } from "./lifecycle.js";

/** An adapter's one error mapper: what failed (`what`, e.g. "sendMessage") and why, as a typed error. */
export type PlatformErrorMapper = (channel: string, err: unknown, what: string) => ChannelError;

/** True for a failure the channel's status shows as its last error. */
export function countsAgainstChannel(err: ChannelError): boolean {
  return !(err instanceof FileTooLargeError) && err.code !== "not_modified";
}

export class PlatformCalls {
  constructor(
    private readonly channel: string,
    private readonly map: PlatformErrorMapper,
    private readonly life: Pick<ChannelLifecycle, "noteError">,
  ) {}

  /** Runs one platform call (`what`); a failure is mapped, noted, and thrown. */
  async run<T>(what: string, call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await call();
    } catch (err) {
      // Stopped by the core (/stop, a download's time limit): not the platform's failure.
      if (signal?.aborted) throw signal.reason;
      throw this.failure(err, what);
    }
  }

  /** The typed error for a failed call, noted on the channel's status when it counts. */
  failure(err: unknown, what: string): ChannelError {
    return this.note(this.map(this.channel, err, what));
  }

  /** Notes an already mapped failure on the channel's status when it counts; returns it. */
  note<E extends ChannelError>(err: E): E {
    if (countsAgainstChannel(err)) this.life.noteError(err);
    return err;
  }
}
