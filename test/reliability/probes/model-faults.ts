/**
 * Probe 4a: model failures. Each conversation's every model call fails one way: HTTP 500,
 * HTTP 429, a connection dropped after two chunks, a malformed chunk after two. No reply can
 * succeed, so each message must end with a readable error notice, and the gateway must live on.
 * A control conversation per fault kind then checks the gateway still answers normally.
 */
import type { ProbeContext, ProbeResult } from "../harness.js";
import type { FaultKind } from "../model.js";
import { sleep, until } from "../util.js";

const KINDS: FaultKind[] = ["http500", "http429", "disconnect", "malformed"];

export async function modelFaultsProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const perKind = ctx.size(3, 10);
  const model = await ctx.model();
  const world = await ctx.telegram();
  const gw = await ctx.gateway(model, { channels: { telegram: world.channelConfig() } });
  if (!(await gw.waitReady(["telegram"]))) throw new Error("the gateway did not come up");
  let u = 0;
  for (const kind of KINDS) for (let i = 0; i < perKind; i++, u++) world.send(u, `f${u}`, kind);
  await until(() => world.evaluate().lost === 0, ctx.size(30_000, 90_000), 250);
  for (const [i, kind] of KINDS.entries()) world.send(u + i, `ok-after-${kind}`, "short");
  await until(() => world.evaluate().lost === 0, 20_000, 250);
  await sleep(1_000);
  const failures = gw.alive ? [] : ["the gateway is not running after the model faults"];
  const notes = [`${perKind} conversation(s) per fault (${KINDS.join(", ")}), then ${KINDS.length} normal ones`];
  return ctx.result(world.evaluate(), notes, failures);
}
