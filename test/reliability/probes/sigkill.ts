/**
 * Probe 1: SIGKILL while N replies stream (one more message queued per user), then a restart.
 * Cut-off replies may end with a notice; the queued messages must be run after the restart.
 */
import type { ProbeContext, ProbeResult } from "../harness.js";
import { checkQueuedRan, restartAndSettle, startStreams } from "./streams.js";

export async function sigkillProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const n = ctx.size(10, 50);
  const s = await startStreams(ctx, n);
  const finishedBefore = s.world.evaluate().answeredOnce;
  await s.gw.kill("SIGKILL");
  await restartAndSettle(ctx, s, ctx.size(30_000, 60_000));
  checkQueuedRan(s);
  const notes = [`${n} streams killed (${finishedBefore} messages already answered), ${n} more queued behind them`];
  return ctx.result(s.world.evaluate(), notes, s.failures);
}
