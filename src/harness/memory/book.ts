/**
 * The memory book: a person's facts in a LangGraph store, under the namespace
 * `["memory", <person id>]` (the id written as a label may be, `namespaceOf`), one item per fact (key: the fact's id; value: `text`, `category`,
 * `created_at`, `updated_at`). The store is the tenant's, so tenants stay apart by the store
 * they were given, and persons by the namespace.
 *
 * Writes for one person run one at a time in this process (the turn's extraction and the agent's
 * tools may meet), and each is a change to named facts, never a rewrite of the whole list, so
 * what another process wrote meanwhile is kept. When a person has more than `maxFacts`, the facts
 * updated longest ago go (a fact the person mentions again is updated, so it stays).
 *
 * `track` keeps work that outlives a run (a turn's extraction) so `settled` can wait for it and
 * `close` can end it.
 */
import { randomBytes } from "node:crypto";
import type { BaseStore, Item } from "@langchain/langgraph";
import type { MemoryGroupMode } from "../../config/memory.js";
import { type Logger, silentLogger } from "../../log/logger.js";
import type { MemoryFact, PersonMemory } from "./types.js";

/** The root label of every person's namespace. */
export const MEMORY_NAMESPACE = "memory";
/** The longest fact kept, in characters. */
export const FACT_MAX_CHARS = 300;
/** How many items one read asks the store for: every fact of a person, with room to spare. */
const READ_LIMIT = 5_000;

export interface MemoryBookOptions {
  /** Most facts kept per person (default 50). */
  maxFacts?: number;
  /** Whether memory works in group chats (default off). */
  groups?: MemoryGroupMode;
  logger?: Logger;
  /** Clock, for tests. */
  now?: () => number;
}

/** What one extraction or tool call changes. */
export interface MemoryChanges {
  add?: Array<{ text: string; category?: string | undefined }>;
  update?: Array<{ id: string; text: string; category?: string | undefined }>;
  remove?: string[];
}

/** What a change did, for the tools' answers and the log. */
export interface AppliedChanges {
  added: MemoryFact[];
  updated: MemoryFact[];
  removed: MemoryFact[];
  /** Facts that went to make room (over `maxFacts`). */
  dropped: MemoryFact[];
}

export class MemoryBook implements PersonMemory {
  readonly maxFacts: number;
  readonly groups: MemoryGroupMode;
  readonly logger: Logger;
  readonly #now: () => number;
  /** The last time stamp given: each write gets a later one, so facts added together keep their order. */
  #stamped = 0;
  readonly #writing = new Map<string, Promise<unknown>>();
  readonly #pending = new Map<string, Set<Promise<void>>>();
  readonly #closing = new AbortController();

  constructor(
    readonly store: BaseStore,
    options: MemoryBookOptions = {},
  ) {
    this.maxFacts = options.maxFacts ?? 50;
    this.groups = options.groups ?? "off";
    this.logger = options.logger ?? silentLogger();
    this.#now = options.now ?? Date.now;
  }

  usedIn(chatType: string | undefined): boolean {
    return chatType !== "group" || this.groups === "writer";
  }

  /** Aborted when the book closes: long work (an extraction's model call) ends with it. */
  get signal(): AbortSignal {
    return this.#closing.signal;
  }

  async list(personId: string): Promise<MemoryFact[]> {
    const namespace = namespaceOf(personId);
    const items = await this.store.search(namespace, { limit: READ_LIMIT });
    // A store may match the prefix by characters (PostgresStore does): keep this namespace only.
    return items
      .filter((item) => sameNamespace(item.namespace, namespace))
      .flatMap((item) => factOf(item) ?? [])
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  forget(personId: string, id: string): Promise<MemoryFact | undefined> {
    return this.exclusive(personId, async () => (await this.applyNow(personId, { remove: [id] })).removed[0]);
  }

  clear(personId: string): Promise<number> {
    return this.exclusive(personId, async () => {
      const facts = await this.list(personId);
      for (const fact of facts) await this.store.delete(namespaceOf(personId), fact.id);
      return facts.length;
    });
  }

  /** Applies an extraction's or a tool's changes; ids that are not the person's are ignored. */
  apply(personId: string, changes: MemoryChanges): Promise<AppliedChanges> {
    return this.exclusive(personId, () => this.applyNow(personId, changes));
  }

  /** Keeps `work` (started now) until it ends, so `settled` waits for it; its failure is logged, never thrown. */
  track(personId: string, work: (signal: AbortSignal) => Promise<void>): void {
    let set = this.#pending.get(personId);
    if (!set) {
      set = new Set();
      this.#pending.set(personId, set);
    }
    const running = work(this.#closing.signal).catch((err: unknown) => {
      this.logger.warn({ err, person: personId }, "memory: work after a turn failed");
    });
    const mine = set;
    mine.add(running);
    void running.finally(() => {
      mine.delete(running);
      if (mine.size === 0 && this.#pending.get(personId) === mine) this.#pending.delete(personId);
    });
  }

  async settled(personId?: string): Promise<void> {
    for (;;) {
      const sets = personId === undefined ? [...this.#pending.values()] : [this.#pending.get(personId) ?? new Set()];
      const running = sets.flatMap((s) => [...s]);
      if (running.length === 0) return;
      await Promise.allSettled(running);
    }
  }

  /** Lets the work under way finish for up to `graceMs`, then aborts it and waits for it to end. */
  async close(graceMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([this.settled(), grace]);
    clearTimeout(timer);
    this.#closing.abort();
    await this.settled();
  }

  private async applyNow(personId: string, changes: MemoryChanges): Promise<AppliedChanges> {
    const namespace = namespaceOf(personId);
    const facts = new Map((await this.list(personId)).map((f) => [f.id, f]));
    const done: AppliedChanges = { added: [], updated: [], removed: [], dropped: [] };
    for (const id of changes.remove ?? []) {
      const fact = facts.get(id);
      if (!fact) continue;
      await this.store.delete(namespace, id);
      facts.delete(id);
      done.removed.push(fact);
    }
    for (const change of changes.update ?? []) {
      const old = facts.get(change.id);
      const text = cleanText(change.text);
      if (!old || !text) continue;
      const fact: MemoryFact = { ...old, text, updatedAt: this.stamp(), ...categoryOf(change.category ?? old.category) };
      await this.store.put(namespace, fact.id, storedValue(fact));
      facts.set(fact.id, fact);
      done.updated.push(fact);
    }
    for (const change of changes.add ?? []) {
      const text = cleanText(change.text);
      if (!text) continue;
      const same = [...facts.values()].find((f) => sameText(f.text, text));
      const now = this.stamp();
      // Said again: the fact is confirmed (it stays longer), not kept twice.
      const fact: MemoryFact = same
        ? { ...same, updatedAt: now }
        : { id: newId(facts), text, createdAt: now, updatedAt: now, ...categoryOf(change.category) };
      await this.store.put(namespace, fact.id, storedValue(fact));
      facts.set(fact.id, fact);
      (same ? done.updated : done.added).push(fact);
    }
    const over = facts.size - this.maxFacts;
    if (over > 0) {
      const oldest = [...facts.values()].sort((a, b) => a.updatedAt - b.updatedAt || a.createdAt - b.createdAt).slice(0, over);
      for (const fact of oldest) {
        await this.store.delete(namespace, fact.id);
        done.dropped.push(fact);
      }
    }
    return done;
  }

  private stamp(): number {
    this.#stamped = Math.max(this.#now(), this.#stamped + 1);
    return this.#stamped;
  }

  /** Runs `work` after the person's earlier writes in this process. */
  private exclusive<T>(personId: string, work: () => Promise<T>): Promise<T> {
    const before = this.#writing.get(personId) ?? Promise.resolve();
    const result = before.then(work, work);
    const tail = result.catch(() => undefined);
    this.#writing.set(personId, tail);
    void tail.then(() => {
      if (this.#writing.get(personId) === tail) this.#writing.delete(personId);
    });
    return result;
  }
}

/**
 * The person's namespace: `["memory", <label>]`, the label being the person id with every
 * character but letters, digits and `-` written as `~` and its UTF-8 bytes in hex (`_` is
 * `~5f`). LangGraph forbids `.` and `:` in labels, and PostgresStore also `_`, `%` and a backslash
 * (its prefix search is a LIKE), while Antler's person ids hold `_`.
 */
export function namespaceOf(personId: string): string[] {
  let label = "";
  for (const byte of new TextEncoder().encode(personId)) {
    const c = String.fromCharCode(byte);
    label += /[A-Za-z0-9-]/.test(c) ? c : `~${byte.toString(16).padStart(2, "0")}`;
  }
  return [MEMORY_NAMESPACE, label];
}

function sameNamespace(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((label, i) => label === b[i]);
}

/** A stored item as a fact; undefined for an item that is not one (a user's graph may write there too). */
function factOf(item: Item): MemoryFact | undefined {
  const v = item.value as Record<string, unknown>;
  if (typeof v.text !== "string" || !v.text.trim()) return undefined;
  const created = typeof v.created_at === "number" ? v.created_at : item.createdAt.getTime();
  const updated = typeof v.updated_at === "number" ? v.updated_at : item.updatedAt.getTime();
  return { id: item.key, text: v.text, createdAt: created, updatedAt: updated, ...categoryOf(v.category) };
}

function storedValue(fact: MemoryFact): Record<string, unknown> {
  return {
    text: fact.text,
    ...(fact.category ? { category: fact.category } : {}),
    created_at: fact.createdAt,
    updated_at: fact.updatedAt,
  };
}

function categoryOf(value: unknown): { category?: string } {
  if (typeof value !== "string") return {};
  const category = value.trim().toLowerCase().replace(/\s+/g, "_").slice(0, 40);
  return category ? { category } : {};
}

/** A fact's text on one line, cut at FACT_MAX_CHARS; empty when there is none. */
export function cleanText(value: unknown): string {
  if (typeof value !== "string") return "";
  const flat = value.replace(/\s+/g, " ").trim();
  return flat.length <= FACT_MAX_CHARS ? flat : `${flat.slice(0, FACT_MAX_CHARS - 1).trimEnd()}…`;
}

function sameText(a: string, b: string): boolean {
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, " ")
      .trim();
  return norm(a) === norm(b);
}

function newId(taken: Map<string, unknown>): string {
  for (;;) {
    const id = randomBytes(3).toString("hex");
    if (!taken.has(id)) return id;
  }
}
