/**
 * The two contenders of `npm run bench:peers`, each a child process with its own Telegram fake
 * and mock model (both in the runner's process), so each one's calls and chats stay apart.
 *
 * - Antler: `node dist/cli.js start` (built from the tree) with the default config except the
 *   Telegram channel (polling, `api_base` = the fake, `edit_interval_ms: 1000`), the model = the
 *   mock, storage in a temp folder and logging at warn. Ready = `GET /readyz` answers 200.
 * - bot: `node bot.mjs` (./bot.mjs). Ready = its first getUpdates reaches the fake.
 *
 * Both run as plain JS without a loader. The mock answers every request with the reply the
 * runner set for the scenario and notes when each user's text reached it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { freePort } from "../../contract/gateway.js";
import { lastUserText, type MockModel, type MockReply, startMockModel } from "../../fakes/openai.js";
import { FakeTelegram } from "../../fakes/telegram/index.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../../..");
const CLI = path.join(ROOT, "dist/cli.js");
const BOT = path.join(HERE, "bot.mjs");
export const EDIT_INTERVAL_MS = 1000;

const live = new Set<ChildProcess>();
// Children must not outlive the runner, however it ends.
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130));

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export interface Contender {
  readonly name: "bot" | "Antler";
  readonly fake: FakeTelegram;
  readonly mock: MockModel;
  readonly dir: string;
  readonly pid: number;
  /** ms from spawn to ready (Antler: /readyz 200; bot: first poll). */
  readonly readyMs: number;
  /** ms from spawn to the first getUpdates at the fake. */
  readonly firstPollMs: number;
  /** When each user text reached the model (the mock's first chunk follows at once). */
  readonly modelAt: Map<string, number>;
  /** Antler's SQLite file (the bot keeps nothing). */
  readonly storeFile?: string;
  /** The child has not exited. */
  alive(): boolean;
  /** What the mock streams for every request. */
  reply: MockReply;
  /** SIGTERM (SIGKILL after 15 s), then close the fake and the mock. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Write a V8 CPU profile into <dir>/prof when the child exits. */
  cpuProf?: boolean;
}

export async function startContender(name: Contender["name"], options: StartOptions = {}): Promise<Contender> {
  const dir = mkdtempSync(path.join(tmpdir(), `antler-peers-${name.toLowerCase()}-`));
  const fake = await FakeTelegram.start();
  const mock = await startMockModel();
  const modelAt = new Map<string, number>();
  const contender = { reply: { text: "ok" } as MockReply };
  mock.setDefault((req) => {
    modelAt.set(lastUserText(req), Date.now());
    return contender.reply;
  });

  const flags = options.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${path.join(dir, "prof")}`] : [];
  let args: string[];
  let readyUrl: string | undefined;
  const storeFile = name === "Antler" ? path.join(dir, "antler.db") : undefined;
  if (name === "Antler") {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
    const port = await freePort();
    readyUrl = `http://127.0.0.1:${port}/readyz`;
    const config = {
      server: { host: "127.0.0.1", port },
      storage: { path: storeFile },
      logging: { level: "warn", format: "json" },
      models: [
        { name: "default", use: "@langchain/openai:ChatOpenAI", model: "mock-model", api_key: "sk-mock", base_url: mock.url },
      ],
      channels: {
        telegram: {
          enabled: true,
          mode: "polling",
          bot_token: fake.token,
          api_base: fake.apiRoot,
          edit_interval_ms: EDIT_INTERVAL_MS,
        },
      },
    };
    writeFileSync(path.join(dir, "config.yaml"), stringify(config));
    args = [...flags, CLI, "start", "--config", path.join(dir, "config.yaml")];
  } else {
    args = [...flags, BOT];
  }
  if (options.cpuProf) mkdirSync(path.join(dir, "prof"));

  const log = openSync(path.join(dir, "output.log"), "a");
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: {
      ...process.env,
      NODE_OPTIONS: "",
      BOT_TOKEN: fake.token,
      API_ROOT: fake.apiRoot,
      MODEL_URL: mock.url,
      EDIT_INTERVAL_MS: String(EDIT_INTERVAL_MS),
    },
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => live.delete(child));

  const firstPoll = () => fake.calls.find((c) => c.method === "getUpdates")?.at;
  const isReady = async () => {
    if (!readyUrl) return firstPoll() !== undefined;
    const res = await fetch(readyUrl).catch(() => undefined);
    await res?.text();
    return res?.status === 200;
  };
  const deadline = spawnedAt + 30_000;
  while (!(await isReady())) {
    if (!live.has(child) || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${name} did not get ready within 30 s; see ${path.join(dir, "output.log")}`);
    }
    await sleep(10);
  }
  const readyMs = Date.now() - spawnedAt;
  while (firstPoll() === undefined) await sleep(10);

  return Object.assign(contender, {
    name,
    fake,
    mock,
    dir,
    pid: child.pid as number,
    readyMs,
    firstPollMs: (firstPoll() as number) - spawnedAt,
    modelAt,
    storeFile,
    alive: () => live.has(child),
    async stop() {
      child.kill("SIGTERM");
      const killed = await Promise.race([exited.then(() => false), sleep(15_000).then(() => true)]);
      if (killed) child.kill("SIGKILL");
      await exited;
      await fake.close();
      await mock.close();
    },
  });
}
