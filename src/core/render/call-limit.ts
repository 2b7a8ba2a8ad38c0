/**
 * A platform call outside a reply's Outbound (the typing indicator's clearing, a click's answer,
 * a message only one user sees) that must not hold the conversation when the platform does not
 * answer. Past the limit the wait ends with a `timeout` ChannelError; the call itself is left to
 * settle on its own, its late failure swallowed.
 */
import { ChannelError } from "../../errors.js";

/** A platform call with no answer after this long counts as failed (SDKs often have no timeout). */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

export async function withinCallLimit<T>(
  channel: string,
  what: string,
  call: Promise<T>,
  ms: number = DEFAULT_CALL_TIMEOUT_MS,
): Promise<T> {
  call.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ChannelError(channel, "timeout", `${what} got no answer in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([call, limit]);
  } finally {
    clearTimeout(timer);
  }
}
