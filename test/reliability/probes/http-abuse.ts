/**
 * Probe 5: abuse of every HTTP route, with all four platforms in webhook mode. Checks that
 * /readyz says 200 only once the channels run; then sends each route bad requests (see
 * abuse-attacks.ts), 10 MB and 100 MB bodies, slow headers and many bad requests at once.
 * Fails on any 5xx, reset or unanswered request, on any run started (a model request) and on a
 * gateway that stops answering /healthz. Then one real message per platform must be answered:
 * those four are the row's messages.
 */
import { AbuseLog, attacksOn, parallelAttack } from "../abuse-attacks.js";
import { send, sendBig, slowHeaders } from "../abuse-client.js";
import { controlReply, type Route, startTargets, type Targets } from "../abuse-targets.js";
import type { GatewayProcess } from "../gateway-process.js";
import type { ProbeContext, ProbeResult } from "../harness.js";
import { Ledger } from "../ledger.js";
import { freePort, percentile, seconds, sleep, tally, until } from "../util.js";

const CHANNELS = ["telegram", "slack", "feishu", "dingtalk"];
const WEBHOOKS = ["/webhooks/telegram", "/slack/events", "/webhooks/feishu", "/dingtalk/dingtalk/callback"];

export async function httpAbuseProbe(ctx: ProbeContext): Promise<ProbeResult> {
  const model = await ctx.model();
  const world = await ctx.telegram();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const targets = await startTargets(ctx, world, url);
  const gw = await ctx.gateway(model, { port, channels: targets.channels });
  const failures = await watchReadiness(gw);
  if (!(await gw.waitReady(CHANNELS))) throw new Error("the gateway did not come up with all four channels");
  const log = new AbuseLog();
  for (const route of targets.routes) {
    for (const a of attacksOn(route)) log.add(route.path, a.attack, await send(url, a.req));
  }
  await bigBodies(ctx, url, targets.routes, log);
  const notes: string[] = [];
  failures.push(...(await slowloris(ctx, url, notes)));
  const n = ctx.size(100, 1_000);
  const batch = Array.from({ length: n }, (_, i) => parallelAttack(targets.routes, i));
  const answers = await Promise.all(batch.map((a) => send(url, a.req, 30_000)));
  for (const [i, answer] of answers.entries()) log.add(batch[i]?.req.path ?? "?", batch[i]?.attack ?? "?", answer);
  await sleep(2_000);
  const runs = model.requests.length;
  const health = await send(url, { method: "GET", path: "/healthz" }, 5_000);
  failures.push(...log.failures());
  if (runs > 0) failures.push(`${runs} run(s) started from bad input: ${model.requests.map((r) => r.id).join(", ")}`);
  if (!gw.alive || health.status !== 200) failures.push(`/healthz after the abuse: ${health.status ?? health.error}`);
  notes.push(
    `${log.size} bad requests, ${n} of them at once; runs started: ${runs}; /healthz after: ${health.status ?? health.error}`,
  );
  notes.push(...log.perRoute(), ...log.accepted());
  return ctx.result(await sendControls(targets), notes, failures);
}

/** Polls /readyz from the start; once it says 200, every channel must run and every webhook route exist. */
async function watchReadiness(gw: GatewayProcess): Promise<string[]> {
  const ready = await until(
    async () => (await send(gw.url, { method: "GET", path: "/readyz" }, 1_000)).status === 200,
    30_000,
    10,
  );
  if (!ready) return ["/readyz never answered 200"];
  const [reports, ...routes] = await Promise.all([
    gw.channelReports(),
    ...WEBHOOKS.map((path) =>
      send(gw.url, { method: "POST", path, headers: { "content-type": "application/json" }, body: "{}" }),
    ),
  ]);
  const problems: string[] = [];
  const down = CHANNELS.filter((name) => reports?.find((r) => r.name === name)?.state !== "running");
  if (down.length) problems.push(`/readyz answered 200 while ${down.join(", ")} not running yet`);
  const missing = WEBHOOKS.filter((_, i) => routes[i]?.status === 404);
  if (missing.length) problems.push(`/readyz answered 200 while ${missing.join(", ")} answered 404`);
  return problems;
}

async function bigBodies(ctx: ProbeContext, url: string, routes: Route[], log: AbuseLog): Promise<void> {
  const sizes = ctx.size([10], [10, 100]);
  for (const mb of sizes) {
    for (const r of routes) {
      // Only header-only secrets are sent; a signature over the body is what an attacker lacks.
      const { "x-slack-signature": _s, "X-Lark-Signature": _l, ...headers } = r.sign("");
      const answer = await sendBig(url, { method: r.method, path: r.path, headers }, mb * 1024 * 1024);
      log.add(r.path, `${mb} MB body`, answer);
    }
  }
}

/** Slow-header connections; /healthz must stay quick meanwhile. Judged on time only in the full run. */
async function slowloris(ctx: ProbeContext, url: string, notes: string[]): Promise<string[]> {
  const count = ctx.size(50, 300);
  const windowMs = ctx.size(5_000, 45_000);
  const limitMs = 40_000;
  const pending = slowHeaders(url, "/slack/events", count, windowMs);
  await sleep(Math.min(3_000, windowMs / 2));
  const health = await send(url, { method: "GET", path: "/healthz" }, 2_000);
  const slow = await pending;
  const closed = slow.closedAfter;
  notes.push(
    `${count} slow-header connections for ${seconds(windowMs)}: ${closed.length} closed by the server ` +
      `(p50 ${seconds(percentile(closed, 50))}), ${slow.stillOpen} still open, ${slow.refused} refused; ` +
      `answers ${[...tally(slow.statuses.map(String))].map(([s, k]) => `${s}×${k}`).join(", ") || "none"}; ` +
      `/healthz meanwhile ${health.status ?? health.error} in ${health.ms} ms`,
  );
  const failures: string[] = [];
  if (health.status !== 200 || health.ms > 2_000) failures.push(`/healthz during slow headers: ${health.status ?? health.error}`);
  if (!ctx.settings.short && slow.stillOpen > 0) {
    failures.push(
      `${slow.stillOpen} slow-header connection(s) still open after ${seconds(windowMs)} (limit ${seconds(limitMs)})`,
    );
  } else if (!ctx.settings.short && Math.max(0, ...closed) > limitMs) {
    failures.push(`slow-header connections were closed only after ${seconds(Math.max(...closed))}`);
  }
  return failures;
}

/** One real message per platform after the abuse; each must get its reply. */
async function sendControls(targets: Targets) {
  const ledger = new Ledger();
  for (const c of targets.controls) {
    ledger.add({ id: c.id, chat: c.chat, expected: controlReply(c.id), sentAt: Date.now() });
    await c.send().catch(() => undefined);
  }
  const view = (chat: string) => targets.controls.find((c) => c.chat === chat)?.view() ?? [];
  await until(() => ledger.evaluate(view).lost === 0, 30_000, 250);
  await sleep(1_000);
  return ledger.evaluate(view);
}
