/**
 * The set-up both crash probes share: N Telegram DM users, each with a long slow reply streaming
 * and a second message queued behind it, then a stop (SIGKILL or SIGTERM), a restart on the same
 * database, and a wait until every message has its reply or a notice. A queued message had not
 * started, so after the restart it must be run (a notice is not enough for it).
 */
import type { GatewayProcess } from "../gateway-process.js";
import type { ProbeContext } from "../harness.js";
import { expectedReply, type ScriptedModel } from "../model.js";
import type { TelegramWorld } from "../telegram.js";
import { sleep, until } from "../util.js";

export interface Streams {
  world: TelegramWorld;
  model: ScriptedModel;
  gw: GatewayProcess;
  users: number[];
  failures: string[];
}

/** Starts the gateway, then N long replies streaming at once plus one queued message per user. */
export async function startStreams(ctx: ProbeContext, n: number): Promise<Streams> {
  const model = await ctx.model();
  const world = await ctx.telegram();
  const gw = await ctx.gateway(model, {
    channels: { telegram: world.channelConfig() },
    gateway: { max_concurrent_runs: n + 10 },
  });
  const failures: string[] = [];
  if (!(await gw.waitReady(["telegram"]))) throw new Error("the gateway did not come up");
  const users = Array.from({ length: n }, (_, i) => i);
  for (const u of users) world.send(u, `u${u}m1`, "long");
  if (!(await until(() => world.showing(users) === n, 30_000))) {
    failures.push(`only ${world.showing(users)} of ${n} replies were streaming when the gateway was stopped`);
  }
  for (const u of users) world.send(u, `u${u}m2`, "short");
  if (!(await until(() => world.allConfirmed, 15_000))) failures.push("the queued messages were not all acknowledged");
  await sleep(300);
  return { world, model, gw, users, failures };
}

/** Starts the gateway again and waits until nothing is lost any more (or the deadline). */
export async function restartAndSettle(ctx: ProbeContext, s: Streams, deadlineMs: number): Promise<void> {
  s.gw.start();
  if (!(await s.gw.waitReady(["telegram"]))) s.failures.push("the gateway did not come back after the restart");
  await until(() => s.world.evaluate().lost === 0, deadlineMs, 250);
  // Late copies would be duplicates: give them a moment to show up.
  await sleep(ctx.size(1_500, 4_000));
}

/** Fails for each queued (never started) message that got no reply of its own after the restart. */
export function checkQueuedRan(s: Streams): void {
  const missing = s.users.filter((u) => {
    const expected = expectedReply(`u${u}m2`, "short");
    return !s.world.fake.botMessages(s.world.user(u).id).some((m) => m.text.trim() === expected);
  });
  if (missing.length) s.failures.push(`${missing.length} queued message(s) that had not started were not run after the restart`);
}
