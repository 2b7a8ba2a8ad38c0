/**
 * Probe 3: the Telegram fake answers 429 (retry_after 1 s) to 30% of the bot's calls and 5xx to
 * 10% (both rejected before anything is applied), while N conversations get a streamed reply.
 * Besides those, 2% of sendMessage/editMessageText calls are applied and then answered 502 by
 * the proxy: a copy that follows one of those is the platform's doing, counted apart. The model
 * always answers, so every message must get its reply: a notice instead is a dropped answer.
 */
import type { ProbeContext, ProbeResult } from "../harness.js";
import { seconds, sleep, until } from "../util.js";

export async function platformFaultsProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const n = ctx.size(20, 100);
  const model = await ctx.model();
  const world = await ctx.telegram({ appliedThen5xx: 0.02 });
  const gw = await ctx.gateway(model, { channels: { telegram: world.channelConfig() } });
  if (!(await gw.waitReady(["telegram"]))) throw new Error("the gateway did not come up");
  // "*" is every method but getUpdates. The 5xx share is taken of the calls the 429 left: 0.1 / 0.7.
  world.fake.inject({ method: "*", code: 429, retryAfter: 1, probability: 0.3, seed: 11 });
  world.fake.inject({ method: "*", code: 500, probability: 0.05 / 0.7, seed: 12 });
  world.fake.inject({ method: "*", code: 502, description: "Bad Gateway", probability: 0.05 / 0.7, seed: 13 });
  const started = Date.now();
  for (let u = 0; u < n; u++) world.send(u, `c${u}`, "medium");
  await until(() => world.evaluate().lost === 0, ctx.size(60_000, 240_000), 250);
  const took = Date.now() - started;
  world.fake.clearFaults();
  await sleep(2_000);
  const calls = world.fake.calls.filter((c) => c.method !== "getUpdates");
  const count = (pred: (status: number) => boolean) => calls.filter((c) => pred(c.status)).length;
  const notes = [
    `${calls.length} Bot API calls: ${count((s) => s === 429)} got 429, ${count((s) => s >= 500)} got 5xx, ` +
      `${world.appliedThen5xxCalls} applied then answered 502`,
    `${world.fake.earlyCalls.length} call(s) made before a 429's retry_after had passed`,
    `all answered after ${seconds(took)}`,
  ];
  return ctx.result(world.evaluate(), notes, [], true);
}
