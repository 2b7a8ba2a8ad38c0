/**
 * `npm run test:reliability [-- --short] [-- --only=sigkill-restart,load] [-- --keep-logs] [-- --cli=<path>/cli.js]`
 *
 * Starts the built gateway (dist/, so the npm script builds first) as a child process against
 * the fake platforms and the mock model in this process, runs each probe with its own time
 * limit, and prints one summary table, then notes and evidence. Exits 1 when any probe lost or
 * duplicated a message, the gateway crashed, or a probe's own check failed (see each probe).
 * `--short` is the CI size (about three minutes); the default is the full suite.
 */
import { ProbeContext, type ProbeResult, type Settings } from "./harness.js";
import { Ledger } from "./ledger.js";
import { failoverOrderProbe } from "./probes/failover-order.js";
import { followupsProbe } from "./probes/followups.js";
import { handoverProbe } from "./probes/handover.js";
import { httpAbuseProbe } from "./probes/http-abuse.js";
import { loadProbe } from "./probes/load.js";
import { modelFaultsProbe } from "./probes/model-faults.js";
import { modelStallProbe } from "./probes/model-stall.js";
import { platformFaultsProbe } from "./probes/platform-faults.js";
import { sigkillProbe } from "./probes/sigkill.js";
import { sigtermProbe } from "./probes/sigterm.js";
import { detailTable, failed, summaryTable } from "./table.js";
import { seconds } from "./util.js";

interface Probe {
  name: string;
  /** One row, or several (a row per mode, say). */
  run: (ctx: ProbeContext) => Promise<ProbeResult | ProbeResult[]>;
  /** Hard limit, short and full. */
  limitMs: [number, number];
}

const PROBES: Probe[] = [
  { name: "sigkill-restart", run: sigkillProbe, limitMs: [90_000, 240_000] },
  { name: "sigterm-restart", run: sigtermProbe, limitMs: [90_000, 240_000] },
  { name: "handover", run: handoverProbe, limitMs: [90_000, 180_000] },
  { name: "platform-faults", run: platformFaultsProbe, limitMs: [90_000, 360_000] },
  { name: "model-faults", run: modelFaultsProbe, limitMs: [60_000, 180_000] },
  { name: "model-stall", run: modelStallProbe, limitMs: [90_000, 180_000] },
  { name: "http-abuse", run: httpAbuseProbe, limitMs: [90_000, 420_000] },
  { name: "load", run: loadProbe, limitMs: [90_000, 600_000] },
  { name: "failover-order", run: failoverOrderProbe, limitMs: [120_000, 240_000] },
  { name: "followups", run: followupsProbe, limitMs: [150_000, 900_000] },
];

const args = process.argv.slice(2);
const cli = args.find((a) => a.startsWith("--cli="))?.slice("--cli=".length);
const settings: Settings = { short: args.includes("--short"), keepLogs: args.includes("--keep-logs"), ...(cli ? { cli } : {}) };
const only = args
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",");
const live = new Set<ProbeContext>();

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    for (const ctx of live) for (const gw of ctx.gateways) gw.killNow();
    process.exit(130);
  });
}
process.on("exit", () => {
  for (const ctx of live) for (const gw of ctx.gateways) gw.killNow();
});

async function runProbe(probe: Probe): Promise<ProbeResult[]> {
  const ctx = new ProbeContext(probe.name, settings);
  live.add(ctx);
  const limit = settings.short ? probe.limitMs[0] : probe.limitMs[1];
  const started = Date.now();
  process.stderr.write(`▶ ${probe.name} …\n`);
  let timer: NodeJS.Timeout | undefined;
  let results: ProbeResult[];
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`probe timed out after ${seconds(limit)}`)), limit);
    });
    results = [await Promise.race([probe.run(ctx), timeout])].flat();
  } catch (err) {
    results = ctx.snapshot?.() ?? [ctx.world ? ctx.result(ctx.world.evaluate()) : blank(ctx)];
    for (const result of results) {
      result.failures.push(`probe did not finish: ${(err as Error).message}`);
      result.evidence = ctx.logEvidence();
    }
  } finally {
    clearTimeout(timer);
  }
  const bad = results.some(failed);
  const keep = settings.keepLogs || bad;
  await ctx.close(keep);
  live.delete(ctx);
  if (keep) results.at(-1)?.notes.push(`gateway log: ${ctx.dir}/gateway.log`);
  process.stderr.write(`  ${bad ? "FAIL" : "ok"} in ${seconds(Date.now() - started)}\n`);
  return results;
}

function blank(ctx: ProbeContext): ProbeResult {
  return ctx.result(new Ledger().evaluate(() => []));
}

const started = Date.now();
const results: ProbeResult[] = [];
for (const probe of PROBES.filter((p) => !only || only.includes(p.name))) results.push(...(await runProbe(probe)));
console.log(`\nAntler reliability suite (${settings.short ? "--short" : "full"}), ${seconds(Date.now() - started)}\n`);
console.log(summaryTable(results));
console.log(`\n${detailTable(results)}`);
console.log(
  "\nanswered = the exact reply, or a notice (error, restart, busy) when there is none; lost = neither by the probe's deadline;" +
    "\nduplicates = messages with more than one complete reply. A copy posted by a call the platform applied and then" +
    "\nanswered with a 5xx (made here by a proxy that forwards the call, then returns 502) is not the gateway's fault:" +
    "\nit is listed in the notes, not counted. crashes = gateway exits nobody asked for, or a SIGTERM stop that did not exit 0.",
);
const bad = results.filter(failed);
console.log(bad.length ? `\nFAILED: ${bad.map((r) => r.probe).join(", ")}` : "\nall probes passed");
process.exit(bad.length ? 1 : 0);
