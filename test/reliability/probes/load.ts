/**
 * Probe 6: load. N Telegram DM conversations send M messages each, all at once, at the default
 * gateway settings. Reports time to the first visible text of each reply (p50/p99) and the
 * total time until the last reply, besides the counts. Every message must get its reply.
 */
import type { ProbeContext, ProbeResult } from "../harness.js";
import { percentile, seconds, sleep, until } from "../util.js";

export async function loadProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const n = ctx.size(30, 300);
  const per = ctx.size(2, 3);
  const model = await ctx.model();
  const world = await ctx.telegram();
  const gw = await ctx.gateway(model, { channels: { telegram: world.channelConfig() } });
  if (!(await gw.waitReady(["telegram"]))) throw new Error("the gateway did not come up");
  const started = Date.now();
  for (let u = 0; u < n; u++) for (let m = 1; m <= per; m++) world.send(u, `c${u}m${m}`, "short");
  await until(() => world.evaluate().lost === 0, ctx.size(60_000, 540_000), 500);
  await sleep(2_000);
  const outcome = world.evaluate();
  const first = outcome.firstTextMs;
  const total = outcome.lastReplyAt - started;
  const notes = [
    `${n} conversations × ${per} messages, sent at once; default gateway settings`,
    `first text: p50 ${seconds(percentile(first, 50))}, p99 ${seconds(percentile(first, 99))}, max ${seconds(Math.max(...first))}`,
    `total: ${seconds(total)} until the last reply began (${((outcome.messages / total) * 1000).toFixed(1)} replies/s)`,
  ];
  return ctx.result(outcome, notes, [], true);
}
