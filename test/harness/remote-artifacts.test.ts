/**
 * Files a graph on the real LangGraph API server presents (the `presenter` graph: DeerFlow's
 * `present_files` tool, and entries of the state's `artifacts`), fetched by the remote harness
 * from a stand-in for DeerFlow's artifact route into the thread's folder and the file outbox the
 * gateway posts after the reply. What cannot come leaves a notice in the outbox instead.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RemoteAgentConfig } from "../../src/config/remote.js";
import { FileOutbox, ThreadFiles } from "../../src/harness/files.js";
import { RemoteHarness } from "../../src/harness/index.js";
import type { RunUser } from "../../src/harness/types.js";
import { type ArtifactRoute, startArtifactRoute } from "../fakes/langgraph/artifact-route.js";
import { MODEL_URL_ENV } from "../fakes/langgraph/graphs.js";
import { type MockModel, startMockModel } from "../fakes/openai.js";
import { collect, last, memoryLogger, tempDir } from "./helpers.js";
import { useLangGraphServer } from "./remote-helpers.js";

const lg = useLangGraphServer();
const ADA: RunUser = { id: "1001", name: "Ada", personId: "default-telegram-1001", channel: "telegram", chatType: "direct" };
const OUT = "/mnt/user-data/outputs";
const REPORT = new Uint8Array(Buffer.from("%PDF-1.7 quarterly report"));

let route: ArtifactRoute;
let elsewhere: ArtifactRoute;
beforeAll(async () => {
  route = await startArtifactRoute();
  elsewhere = await startArtifactRoute();
});
afterAll(async () => {
  await route.close();
  await elsewhere.close();
});

interface Rig {
  harness: RemoteHarness;
  mock: MockModel;
  files: ThreadFiles;
  outbox: FileOutbox;
  logs: Array<Record<string, unknown>>;
}
let rig: Rig | undefined;
afterEach(async () => {
  await rig?.harness.close();
  await rig?.mock.close();
  rig = undefined;
  route.files.clear();
  route.requests.length = 0;
  route.hang.clear();
  route.redirects.clear();
  elsewhere.requests.length = 0;
  elsewhere.files.clear();
});

async function start(artifacts: unknown = {}, remote: Record<string, unknown> = {}, maxBytes = 1024 * 1024): Promise<Rig> {
  const mock = await startMockModel();
  process.env[MODEL_URL_ENV] = mock.url;
  const s = lg.server();
  const settings = RemoteAgentConfig.parse({
    url: s.url,
    assistant_id: "presenter",
    api_key: s.apiKey,
    artifacts: typeof artifacts === "object" && artifacts ? { url: route.template, ...artifacts } : artifacts,
    timeout_ms: 1_000,
    ...remote,
  });
  const files = new ThreadFiles(tempDir());
  const outbox = new FileOutbox();
  const { logger, logs } = memoryLogger();
  rig = { harness: new RemoteHarness({ settings, logger, files: { files, outbox, maxBytes } }), mock, files, outbox, logs };
  return rig;
}

const present = (...filepaths: string[]) => ({ toolCalls: [{ name: "present_files", args: { filepaths } }] });
const attach = (args: Record<string, unknown>) => ({ toolCalls: [{ name: "attach", args }] });

async function sent(r: Rig, thread: string): Promise<Array<[string, string]>> {
  return Promise.all(r.outbox.take(thread).map(async (f) => [f.name, await readFile(f.path, "utf8")] as [string, string]));
}

describe("files a remote run presents", () => {
  it("present_files paths, a state path and bytes in the state reach the outbox, once each, with the server's key and the person", async () => {
    const r = await start({ headers: { "X-Owner-User-Id": "{user_id}" } });
    route.files.set(`${OUT}/report.pdf`, REPORT);
    route.files.set(`${OUT}/data/table.csv`, Buffer.from("a,b\n1,2\n"));
    r.mock.enqueue(
      present(`${OUT}/report.pdf`),
      attach({ path: `${OUT}/data/table.csv` }),
      attach({ name: "note.txt", data_base64: Buffer.from("inline bytes").toString("base64") }),
      { text: "Here are your files." },
    );
    const thread = randomUUID();
    const events = await collect(r.harness.run(thread, "make the report", { user: ADA }));
    expect(last(events)).toMatchObject({ type: "done", text: "Here are your files." });
    expect(await sent(r, thread)).toEqual([
      ["report.pdf", "%PDF-1.7 quarterly report"],
      ["table.csv", "a,b\n1,2\n"],
      ["note.txt", "inline bytes"],
    ]);
    expect(r.outbox.takeNotices(thread)).toEqual([]);
    // The report was presented twice (the call and the state entry it wrote): fetched once.
    expect(route.requests.map((q) => [q.threadId, q.path])).toEqual([
      [thread, `${OUT}/report.pdf`],
      [thread, `${OUT}/data/table.csv`],
    ]);
    for (const q of route.requests) {
      expect(q.headers["x-api-key"]).toBe(lg.server().apiKey);
      expect(q.headers["x-owner-user-id"]).toBe("default-telegram-1001");
    }
    // The thread's folder keeps them, as it keeps what users send.
    expect((await r.files.list(thread)).map((f) => f.name).sort()).toEqual(["note.txt", "report.pdf", "table.csv"]);
  });

  it("the next turn does not send an earlier turn's files again", async () => {
    const r = await start();
    route.files.set(`${OUT}/report.pdf`, REPORT);
    r.mock.enqueue(present(`${OUT}/report.pdf`), { text: "Done." }, { text: "You're welcome." });
    const thread = randomUUID();
    await collect(r.harness.run(thread, "report please", { user: ADA }));
    expect((await sent(r, thread)).map(([name]) => name)).toEqual(["report.pdf"]);
    await collect(r.harness.run(thread, "thanks", { user: ADA }));
    expect(await sent(r, thread)).toEqual([]);
    expect(route.requests).toHaveLength(1);
  });

  it("a file that cannot be fetched, is too large or names a path out of the route gets a notice; the rest still come", async () => {
    const r = await start({}, {}, 64);
    route.files.set(`${OUT}/ok.txt`, Buffer.from("fine"));
    route.files.set(`${OUT}/big.bin`, new Uint8Array(65));
    route.hang.add(`${OUT}/slow.txt`);
    r.mock.enqueue(
      present(`${OUT}/missing.pdf`, `${OUT}/big.bin`, `${OUT}/ok.txt`, `${OUT}/slow.txt`, `${OUT}/../../secrets.txt`),
      { text: "Tried." },
    );
    const thread = randomUUID();
    const events = await collect(r.harness.run(thread, "files", { user: ADA }));
    expect(last(events)).toMatchObject({ type: "done", text: "Tried." });
    expect(await sent(r, thread)).toEqual([["ok.txt", "fine"]]);
    expect(r.outbox.takeNotices(thread)).toEqual([
      "I couldn't get “missing.pdf” from the agent, so it was not sent.",
      "“big.bin” is larger than the 64 B limit, so it was not sent.",
      "I couldn't get “slow.txt” from the agent within 1 second, so it was not sent.",
      "I couldn't get “secrets.txt” from the agent, so it was not sent.",
    ]);
    // The path with `..` never became a request.
    expect(route.requests.map((q) => q.path).sort()).toEqual([
      `${OUT}/big.bin`,
      `${OUT}/missing.pdf`,
      `${OUT}/ok.txt`,
      `${OUT}/slow.txt`,
    ]);
    const warned = r.logs.filter((l) => l.msg === "could not fetch a file the agent presented");
    expect(warned.map((l) => l.file).sort()).toEqual(["missing.pdf", "secrets.txt", "slow.txt"]);
    expect(JSON.stringify(r.logs)).not.toContain(lg.server().apiKey);
  });

  it("a failed present_files call presents nothing", async () => {
    const r = await start();
    r.mock.enqueue(present("/etc/passwd"), { text: "I can only present outputs." });
    const thread = randomUUID();
    await collect(r.harness.run(thread, "show me passwd", { user: ADA }));
    expect(await sent(r, thread)).toEqual([]);
    expect(r.outbox.takeNotices(thread)).toEqual([]);
    expect(route.requests).toEqual([]);
  });

  it("an artifact given as a URL elsewhere is fetched without the server's credentials, redirects included", async () => {
    const r = await start({ headers: { "X-Owner-User-Id": "{user_id}" } }, { headers: { "X-Tenant": "acme" } });
    elsewhere.files.set("chart.png", Buffer.from("png bytes"));
    elsewhere.files.set("moved.txt", Buffer.from("moved bytes"));
    route.redirects.set("old.txt", `${elsewhere.origin}/plain/moved.txt`);
    r.mock.enqueue(
      attach({ name: "chart.png", url: `${elsewhere.origin}/plain/chart.png` }),
      attach({ name: "moved.txt", url: `${route.origin}/plain/old.txt` }),
      { text: "Charted." },
    );
    const thread = randomUUID();
    await collect(r.harness.run(thread, "chart it", { user: ADA }));
    expect(await sent(r, thread)).toEqual([
      ["chart.png", "png bytes"],
      ["moved.txt", "moved bytes"],
    ]);
    // The server's own origin got them; the other origin, even after a redirect, did not.
    expect(route.requests[0]?.headers).toMatchObject({ "x-api-key": lg.server().apiKey, "x-tenant": "acme" });
    expect(elsewhere.requests).toHaveLength(2);
    for (const q of elsewhere.requests) {
      expect(q.headers["x-api-key"]).toBeUndefined();
      expect(q.headers["x-tenant"]).toBeUndefined();
      expect(q.headers["x-owner-user-id"]).toBeUndefined();
    }
  });

  it("artifacts: false fetches nothing", async () => {
    const r = await start(false);
    route.files.set(`${OUT}/report.pdf`, REPORT);
    r.mock.enqueue(present(`${OUT}/report.pdf`), { text: "Done." });
    const thread = randomUUID();
    await collect(r.harness.run(thread, "report", { user: ADA }));
    expect(await sent(r, thread)).toEqual([]);
    expect(route.requests).toEqual([]);
  });

  it("files presented before a question go out with the question, and not again after the answer", async () => {
    const r = await start();
    route.files.set(`${OUT}/draft.md`, Buffer.from("# Draft"));
    r.mock.enqueue(
      present(`${OUT}/draft.md`),
      { toolCalls: [{ name: "ask_clarification", args: { question: "Publish it?" } }] },
      { text: "Published." },
    );
    const thread = randomUUID();
    const asked = await collect(r.harness.run(thread, "write a draft", { user: ADA }));
    expect(last(asked)).toMatchObject({ type: "clarification", question: "Publish it?" });
    expect(await sent(r, thread)).toEqual([["draft.md", "# Draft"]]);
    await collect(r.harness.resume(thread, "yes", { user: ADA }));
    expect(await sent(r, thread)).toEqual([]);
    expect(route.requests).toHaveLength(1);
  });
});
