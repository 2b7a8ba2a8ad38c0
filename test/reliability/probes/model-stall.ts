/**
 * Probe 4b: stalled model streams. A hundred conversations get a stream that sends three chunks
 * and then nothing, with the connection left open: more than the gateway's 64 default run slots
 * (`max_concurrent_runs`). A stalled run gives its slot up after `gateway.stall_release_ms`, so
 * all hundred must be open at once, and a conversation sent while they all hang must be answered
 * at most 2 s slower than one sent before them (after a warm-up message, so the first run's cold
 * start does not pad the baseline). Each stalled conversation must end with a notice
 * (`models[].stream_idle_timeout_ms`, long enough that none ends before the checks).
 *
 * A conversation sent right behind the hundred is timed too, as a note: it queues behind the 64
 * that take every slot first and starts once enough of them have stalled, so its time is mostly
 * the cost of starting a hundred runs at once on this machine, not of the stalls.
 */
import type { ProbeContext, ProbeResult } from "../harness.js";
import { expectedReply } from "../model.js";
import type { TelegramWorld } from "../telegram.js";
import { seconds, sleep, until } from "../util.js";

const STALLS = 100;
const ALLOWED_DELAY_MS = 2_000;

/** Sends a short message as user `n` and resolves to the ms until its complete reply (Infinity if none in time). */
async function timedReply(world: TelegramWorld, n: number, id: string, timeoutMs: number): Promise<number> {
  const sent = Date.now();
  world.send(n, id, "short");
  const chat = world.user(n).id;
  const expected = expectedReply(id, "short");
  const ok = await until(() => world.fake.botMessages(chat).some((m) => m.text.trim() === expected), timeoutMs, 20);
  return ok ? Date.now() - sent : Number.POSITIVE_INFINITY;
}

export async function modelStallProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const model = await ctx.model();
  const world = await ctx.telegram();
  const idleMs = ctx.size(30_000, 45_000);
  const gw = await ctx.gateway(model, {
    channels: { telegram: world.channelConfig() },
    model: { stream_idle_timeout_ms: idleMs },
  });
  if (!(await gw.waitReady(["telegram"]))) throw new Error("the gateway did not come up");
  const deadline = idleMs + ctx.size(40_000, 60_000);
  await timedReply(world, 0, "warm-up", 20_000);
  const baseline = await timedReply(world, STALLS + 3, "before-stalls", 20_000);
  for (let i = 1; i <= STALLS; i++) world.send(i, `stall${i}`, "stall");
  // Right behind the hundred: 64 of them take every slot first, and give them up as they stall.
  const behind = await timedReply(world, STALLS + 1, "behind-stalls", 20_000);
  const allOpen = await until(() => model.stalled >= STALLS, 20_000, 50);
  const hanging = model.stalled;
  const amid = await timedReply(world, STALLS + 2, "amid-stalls", 20_000);
  const stillHanging = model.stalled;
  await until(() => world.evaluate().lost === 0, deadline, 250);
  await sleep(1_000);
  const failures: string[] = [];
  if (!allOpen) failures.push(`only ${hanging} of ${STALLS} stalled streams were ever open at once (64 run slots)`);
  if (stillHanging < STALLS) {
    failures.push(`${STALLS - stillHanging} stalled streams ended before the checks: the idle limit is too short to judge`);
  }
  if (!(amid <= baseline + ALLOWED_DELAY_MS)) {
    const text = Number.isFinite(amid) ? `took ${seconds(amid)}` : "did not come within 20 s";
    failures.push(
      `the reply sent while ${hanging} streams hung ${text}, ${seconds(baseline)} before the stalls (allowed: 2 s more)`,
    );
  }
  const extra = (took: number) => (Number.isFinite(took) ? `${((took - baseline) / 1000).toFixed(2)} s` : "-");
  const notes = [
    `reply time: ${seconds(baseline)} before the stalls; ${seconds(amid)} while ${hanging} hung (extra ${extra(amid)}); ${seconds(behind)} sent right behind the ${STALLS} (extra ${extra(behind)}, not judged)`,
    `stalled model connections still open at the end: ${model.stalled}`,
  ];
  return ctx.result(world.evaluate(), notes, failures);
}
