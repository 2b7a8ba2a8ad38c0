/**
 * The long conversation of `npm run bench:peers` (scenario 4: `--long`, or `--only=4`): one
 * Telegram DM user sends `turns` (200) messages one after another, each as soon as the previous
 * reply shows its exact final text, first to the bot, then to Antler. Every reply is 30 tokens
 * streamed with no delay, its first word the turn's number, so each turn's reply is told apart.
 * Per window of ten turns (1–10, 41–50, 91–100, 141–150, 191–200, and the last ten when
 * `--turns` ends elsewhere) it prints:
 * - CPU ms/turn: the process tree's CPU (./proc.ts) from just before the window's first message
 *   to just before the message after the window (for the last window: until the fake saw no
 *   call but polling for 500 ms), divided by its turns. Work a reply leaves behind after its
 *   final edit lands in the next turn, which the ten-turn windows even out.
 * - model request KB/turn: bytes of the chat-completions request bodies the mock received in
 *   those turns (re-serialized from the parsed JSON, so within a few bytes of what was sent).
 *   The bot sends only the user's text; Antler sends the history, so its growth here is the
 *   agent's context, not the gateway's cost.
 * - Antler store KB/turn and MB: the SQLite file's logical size, `page_count × page_size` read
 *   through a read-only connection of the runner's own. That is what the main file holds once
 *   the WAL is checkpointed: committed pages still only in the -wal file count, and the -wal
 *   file's own size (SQLite reuses it without shrinking it) does not, so a WAL reset does not
 *   show as a sudden drop or jump. Free pages count (the file does not shrink by itself); the
 *   end line says how many there are, the bytes on disk (main file, -wal, -shm) and the bytes
 *   per table (SQLite's dbstat).
 * - final p50 ms: from the message to the exact full reply; RSS MB: the tree's at window end.
 * Then the acceptance of issue 34 as three lines (met / not met, with the figures): CPU per turn
 * at 191–200 at most 1.3× that at 41–50; store growth at most 20 KB per turn at turn 200; the
 * store under 3 MB after 200 turns. They report, they do not fail the run.
 */
import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { type Contender, sleep } from "./contenders.js";
import { treeCpuMs, treeRssBytes } from "./proc.js";

export const LONG_TURNS = 200;
const TOKENS = 30;
/** Each token is one 6-character word, so the reply has exactly TOKENS chunks. */
const CHUNK = 6;
const TURN_TIMEOUT_MS = 30_000;
const WINDOW = 10;
const WINDOW_STARTS = [1, 41, 91, 141, 191];
const KB = 1024;
const MB = 2 ** 20;

/** The user and the turn numbers are not those of any other scenario. */
const USER = { id: 4_000_001, first_name: "Long" };

function replyText(turn: number): string {
  const words = Array.from({ length: TOKENS - 1 }, (_, i) => `w${String(i).padStart(4, "0")}`);
  return [`t${String(turn).padStart(4, "0")}`, ...words].join(" ");
}

/** The SQLite file seen through a read-only connection: each read sees the newest commit. */
class StoreFile {
  private readonly db: Database.Database;

  constructor(readonly file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
  }

  private pragma(name: string): number {
    return Number(this.db.pragma(name, { simple: true }));
  }

  /** page_count × page_size: the main file's size once the WAL is checkpointed. */
  bytes(): number {
    return this.pragma("page_count") * this.pragma("page_size");
  }

  freeBytes(): number {
    return this.pragma("freelist_count") * this.pragma("page_size");
  }

  /** Bytes of each table with its indexes (dbstat), largest first. */
  byTable(): Array<{ name: string; bytes: number }> {
    try {
      const rows = this.db
        .prepare(
          `SELECT COALESCE(m.tbl_name, s.name) AS name, SUM(s.pgsize) AS bytes
           FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY 1 ORDER BY 2 DESC`,
        )
        .all() as Array<{ name: string; bytes: number }>;
      return rows;
    } catch {
      return []; // a SQLite without the dbstat table
    }
  }

  /** Bytes on disk now: the main file, the -wal and the -shm. */
  onDisk(): { main: number; wal: number; shm: number } {
    const size = (f: string) => {
      try {
        return statSync(f).size;
      } catch {
        return 0;
      }
    };
    return { main: size(this.file), wal: size(`${this.file}-wal`), shm: size(`${this.file}-shm`) };
  }

  close(): void {
    this.db.close();
  }
}

/** What was measured before each turn; index `turns` holds the end of the run. */
interface Mark {
  cpuMs: number;
  storeBytes: number;
  requests: number;
  rssBytes: number;
}

interface Trace {
  marks: Mark[];
  /** Per turn: ms from the message to the exact full reply. */
  finalMs: number[];
  /** Per turn: request body bytes and requests the mock received. */
  requestBytes: number[];
  requestCount: number[];
  seconds: number;
}

async function converse(c: Contender, turns: number, store: StoreFile | undefined): Promise<Trace> {
  const mark = (): Mark => ({
    cpuMs: treeCpuMs(c.pid),
    storeBytes: store?.bytes() ?? 0,
    requests: c.mock.requests.length,
    rssBytes: treeRssBytes(c.pid),
  });
  const marks: Mark[] = [];
  const finalMs: number[] = [];
  const startedAt = Date.now();
  for (let turn = 1; turn <= turns; turn++) {
    const reply = replyText(turn);
    c.reply = { text: reply, chunkSize: CHUNK, delayMs: 0 };
    marks.push(mark());
    const sentAt = Date.now();
    c.fake.dm(USER, `turn ${turn}: go on`);
    const deadline = sentAt + TURN_TIMEOUT_MS;
    let full: number | undefined;
    while (full === undefined) {
      const message = c.fake.botMessages(USER.id).findLast((m) => m.text === reply);
      full = message?.versions.find((v) => v.text === reply)?.at;
      if (full !== undefined) break;
      if (!c.alive()) throw new Error(`${c.name} exited at turn ${turn} of the long conversation; see ${c.dir}`);
      if (Date.now() > deadline) throw new Error(`${c.name}: no full reply to turn ${turn} within 30 s; see ${c.dir}`);
      await sleep(20);
    }
    finalMs.push(full - sentAt);
    if (turn % 25 === 0) process.stderr.write(`${c.name}: turn ${turn} of ${turns}\n`);
  }
  const seconds = (Date.now() - startedAt) / 1000;
  // Quiet: no Bot API call but polling for 500 ms (at most 5 s), so the last turn's trailing work counts.
  const quietBy = Date.now() + 5_000;
  for (;;) {
    const last = c.fake.calls.findLast((call) => call.method !== "getUpdates")?.at ?? 0;
    if (Date.now() - last >= 500 || Date.now() > quietBy) break;
    await sleep(50);
  }
  marks.push(mark());
  const requestBytes: number[] = [];
  const requestCount: number[] = [];
  for (let t = 0; t < turns; t++) {
    const requests = c.mock.requests.slice((marks[t] as Mark).requests, (marks[t + 1] as Mark).requests);
    requestBytes.push(requests.reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r)), 0));
    requestCount.push(requests.length);
  }
  return { marks, finalMs, requestBytes, requestCount, seconds };
}

/** The windows of ten that fit in `turns`, and the last ten when no window ends there. */
export function windows(turns: number): Array<[number, number]> {
  const fitting = WINDOW_STARTS.map((s): [number, number] => [s, s + WINDOW - 1]).filter(([, end]) => end <= turns);
  if (fitting.at(-1)?.[1] !== turns) fitting.push([Math.max(1, turns - WINDOW + 1), turns]);
  return fitting;
}

interface WindowFigures {
  cpuPerTurn: number;
  requestKbPerTurn: number;
  requestsPerTurn: number;
  storeKbPerTurn: number;
  storeMbAtEnd: number;
  finalP50: number;
  rssMb: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}

function figures(trace: Trace, [first, last]: [number, number]): WindowFigures {
  const n = last - first + 1;
  const from = trace.marks[first - 1] as Mark;
  const to = trace.marks[last] as Mark;
  const sum = (values: number[]) => values.slice(first - 1, last).reduce((a, b) => a + b, 0);
  return {
    cpuPerTurn: (to.cpuMs - from.cpuMs) / n,
    requestKbPerTurn: sum(trace.requestBytes) / KB / n,
    requestsPerTurn: sum(trace.requestCount) / n,
    storeKbPerTurn: (to.storeBytes - from.storeBytes) / KB / n,
    storeMbAtEnd: to.storeBytes / MB,
    finalP50: median(trace.finalMs.slice(first - 1, last)),
    rssMb: to.rssBytes / MB,
  };
}

const num = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : "-");
const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
const verdict = (ok: boolean) => (ok ? "met" : "NOT met");

/** Runs the long conversation on both contenders and returns the lines to print. */
export async function runLong(bot: Contender, antler: Contender, turns: number): Promise<string[]> {
  const b = await converse(bot, turns, undefined);
  await sleep(1_000);
  if (!antler.storeFile) throw new Error("Antler has no store file");
  const store = new StoreFile(antler.storeFile);
  try {
    const a = await converse(antler, turns, store);
    return report(b, a, store, turns);
  } finally {
    store.close();
  }
}

function report(b: Trace, a: Trace, store: StoreFile, turns: number): string[] {
  const perWindow = windows(turns).map((w) => ({ w, b: figures(b, w), a: figures(a, w) }));
  const requests = (f: WindowFigures) =>
    num(f.requestKbPerTurn, 1) + (Math.abs(f.requestsPerTurn - 1) > 0.001 ? ` (${num(f.requestsPerTurn, 1)} req)` : "");
  const lines = [
    `long conversation: one DM, ${turns} turns, ${TOKENS} tokens @ 0 ms; bot ${num(b.seconds)} s, Antler ${num(a.seconds)} s`,
    "",
    row([
      "turns",
      "CPU ms/turn bot / Antler (Antler ÷ bot)",
      "model request KB/turn bot / Antler",
      "Antler store KB/turn",
      "Antler store MB at window end",
      "final p50 ms bot / Antler",
      "RSS MB at window end bot / Antler",
    ]),
    row(Array(7).fill("---")),
  ];
  for (const { w, b: fb, a: fa } of perWindow) {
    const ratio = fb.cpuPerTurn > 0 ? `${(fa.cpuPerTurn / fb.cpuPerTurn).toFixed(2)}×` : "-";
    lines.push(
      row([
        `${w[0]}–${w[1]}`,
        `${num(fb.cpuPerTurn, 1)} / ${num(fa.cpuPerTurn, 1)} (${ratio})`,
        `${requests(fb)} / ${requests(fa)}`,
        num(fa.storeKbPerTurn, 1),
        num(fa.storeMbAtEnd, 2),
        `${num(fb.finalP50)} / ${num(fa.finalP50)}`,
        `${num(fb.rssMb)} / ${num(fa.rssMb)}`,
      ]),
    );
  }

  const endBytes = (a.marks[turns] as Mark).storeBytes;
  const disk = store.onDisk();
  const tables = store
    .byTable()
    .slice(0, 5)
    .map((t) => `${t.name} ${num(t.bytes / MB, 2)}`)
    .join(", ");
  lines.push(
    "",
    `Antler's store after ${turns} turns: ${num(endBytes / MB, 2)} MB (page_count × page_size), ` +
      `${num(store.freeBytes() / MB, 2)} MB of it free pages; on disk: main file ${num(disk.main / MB, 2)} MB, ` +
      `-wal ${num(disk.wal / MB, 2)} MB, -shm ${num(disk.shm / KB)} KB`,
  );
  if (tables) lines.push(`by table (MB, with its indexes): ${tables}`);

  // Issue 34's acceptance, measured at 200 turns; a shorter run shows the same checks on its own windows.
  const mid = perWindow.find(({ w }) => w[0] === 41)?.a;
  const end = perWindow.at(-1) as (typeof perWindow)[number];
  const at = turns === LONG_TURNS ? "" : ` (after ${turns} turns: the acceptance is at ${LONG_TURNS})`;
  lines.push("", `acceptance (issue 34)${at}:`);
  if (mid && end.w[0] > 50) {
    const r = end.a.cpuPerTurn / mid.cpuPerTurn;
    lines.push(
      `- CPU per turn at ${end.w[0]}–${end.w[1]} ≤ 1.3× that at 41–50: ${verdict(r <= 1.3)} ` +
        `(${num(end.a.cpuPerTurn, 1)} / ${num(mid.cpuPerTurn, 1)} ms = ${r.toFixed(2)}×)`,
    );
  } else lines.push("- CPU per turn at 191–200 ≤ 1.3× that at 41–50: not measured (needs at least 60 turns)");
  lines.push(
    `- store growth per turn at turn ${turns} ≤ 20 KB: ${verdict(end.a.storeKbPerTurn <= 20)} ` +
      `(${num(end.a.storeKbPerTurn, 1)} KB/turn over ${end.w[0]}–${end.w[1]})`,
    `- store after ${turns} turns < 3 MB: ${verdict(endBytes < 3 * MB)} (${num(endBytes / MB, 2)} MB)`,
  );
  return lines;
}
