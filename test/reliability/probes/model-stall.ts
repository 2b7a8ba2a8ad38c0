/**
 * Probe 4b: stalled model streams. Ten conversations get a stream that sends three chunks and
 * then nothing, with the connection left open. Each must end with a notice (the config sets
 * `models[].stream_idle_timeout_ms` to 6 s, 15 s in the full run), and an eleventh conversation, sent while they
 * hang (well before that timeout), must be answered about as fast as one sent before them (at
 * most 3 s slower). The gateway keeps its default `max_concurrent_runs`.
 */
import type { ProbeContext, ProbeResult } from "../harness.js";
import { expectedReply } from "../model.js";
import type { TelegramWorld } from "../telegram.js";
import { seconds, sleep, until } from "../util.js";

const STALLS = 10;
const ALLOWED_DELAY_MS = 3_000;

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
  const gw = await ctx.gateway(model, {
    channels: { telegram: world.channelConfig() },
    model: { stream_idle_timeout_ms: ctx.size(6_000, 15_000) },
  });
  if (!(await gw.waitReady(["telegram"]))) throw new Error("the gateway did not come up");
  const deadline = ctx.size(50_000, 90_000);
  const baseline = await timedReply(world, 0, "before-stalls", 20_000);
  for (let i = 1; i <= STALLS; i++) world.send(i, `stall${i}`, "stall");
  // As many as the gateway lets run at once: wait until no more arrive (or all ten do).
  let seen = -1;
  await until(
    () => {
      const now = model.stalled;
      const settled = now === seen && now > 0;
      seen = now;
      return now >= STALLS || settled;
    },
    5_000,
    500,
  );
  const hanging = model.stalled;
  const eleventh = await timedReply(world, STALLS + 1, "eleventh", 20_000);
  await until(() => world.evaluate().lost === 0, deadline, 250);
  await sleep(1_000);
  const failures: string[] = [];
  if (!(eleventh <= baseline + ALLOWED_DELAY_MS)) {
    const took = Number.isFinite(eleventh) ? `took ${seconds(eleventh)}` : "did not come within 20 s";
    failures.push(`the 11th conversation's reply ${took} with ${hanging} streams stalled (${seconds(baseline)} before)`);
  }
  const notes = [
    `reply time: ${seconds(baseline)} before the stalls, ${seconds(eleventh)} for the 11th while ${hanging} streams hung`,
    `stalled model connections still open at the end: ${model.stalled}`,
  ];
  return ctx.result(world.evaluate(), notes, failures);
}
