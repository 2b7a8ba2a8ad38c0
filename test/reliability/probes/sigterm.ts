/**
 * Probe 2: SIGTERM while N replies stream (a clean stop mid-stream), then a restart. Also
 * checks what the issue asks of a shutdown: no run starts after SIGTERM, no user is told
 * "Stopped: the reply was cancelled" (that reads like their own /stop), and the queued messages
 * are run after the restart.
 */
import type { ProbeContext, ProbeResult } from "../harness.js";
import { seconds } from "../util.js";
import { checkQueuedRan, restartAndSettle, startStreams } from "./streams.js";

const CANCELLED = /reply was cancelled/i;

export async function sigtermProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const n = ctx.size(10, 50);
  const s = await startStreams(ctx, n);
  const termAt = Date.now();
  const exit = await s.gw.kill("SIGTERM");
  const stopMs = (exit?.at ?? Date.now()) - termAt;
  const startedAfter = s.model.requests.filter((r) => r.at > termAt && r.at <= (exit?.at ?? Date.now())).length;
  await restartAndSettle(ctx, s, ctx.size(30_000, 60_000));
  checkQueuedRan(s);
  const outcome = s.world.evaluate();
  const cancelled = [...outcome.notices].filter(([text]) => CANCELLED.test(text)).reduce((a, [, k]) => a + k, 0);
  const notes = [
    `stop took ${seconds(stopMs)}, exit code ${exit?.code ?? exit?.signal ?? "?"}`,
    `model requests after SIGTERM: ${startedAfter}`,
  ];
  const failures = [...s.failures];
  if (startedAfter > 0) failures.push(`${startedAfter} run(s) started after SIGTERM`);
  if (cancelled > 0) failures.push(`${cancelled} user(s) told "the reply was cancelled" by a shutdown`);
  return ctx.result(outcome, notes, failures);
}
