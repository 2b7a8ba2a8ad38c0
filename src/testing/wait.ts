/** Waiting for a condition in tests: `eventually`, its deadline floor, and `sleep`. */

let waitFloorMs = 0;

/**
 * Makes every `eventually` wait at least `ms` before it gives up. A deadline is a safety net
 * against a hang, not a measure of speed: on a loaded CI machine a condition can take many times
 * its quiet time, so a test suite may raise every deadline at once (Antler's own does, in
 * `test/helpers/setup.ts`).
 */
export function setWaitFloor(ms: number): void {
  waitFloorMs = ms;
}

/**
 * Polls `check` until it returns a value other than undefined/false (a throw counts as not yet),
 * or fails after `timeoutMs` (at least the floor of `setWaitFloor`).
 */
export async function eventually<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  timeoutMs = Math.max(timeoutMs, waitFloorMs);
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ""}`);
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
