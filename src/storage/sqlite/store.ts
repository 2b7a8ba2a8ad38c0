/**
 * LangGraph's long-term store (`BaseStore`) in the SQLite file the checkpoints live in: one
 * table, `antler_store`, every row marked with its tenant, so one tenant's store never reads or
 * writes another's (as `TenantCheckpointSaver` keeps checkpoints apart). The SQLite checkpoint
 * package has no store of its own; this is the small part of one Antler needs, and what a user's
 * graph may use: put, get, delete, search under a namespace prefix (a filter on the value's
 * top-level keys, and a plain word match for `query`), and listNamespaces.
 *
 * A namespace is kept as its labels joined by `.` (LangGraph forbids `.` in labels), so a prefix
 * is matched by label, never by characters: `["memory", "a"]` does not find `["memory", "ab"]`.
 */
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from "@langchain/langgraph-checkpoint";
import type Database from "better-sqlite3";

const SCHEMA = `CREATE TABLE IF NOT EXISTS antler_store (
  tenant TEXT NOT NULL,
  prefix TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, prefix, key)
)`;

/** The rows under a namespace prefix: the namespace itself and every one below it (`.` then `/` bound the range). */
const UNDER = "tenant = @tenant AND (@prefix = '' OR prefix = @prefix OR (prefix >= @prefix || '.' AND prefix < @prefix || '/'))";

interface Row {
  prefix: string;
  key: string;
  value: string;
  created_at: number;
  updated_at: number;
}

/** One tenant's store in a database it shares with the other tenants' stores. */
export class SqliteStore extends BaseStore {
  private ready = false;

  constructor(
    private readonly db: Database.Database,
    readonly tenant: string,
    private readonly clock: () => number = Date.now,
  ) {
    super();
  }

  /** Creates the table when missing; every operation calls it first. */
  setup(): void {
    if (this.ready) return;
    this.db.exec(SCHEMA);
    this.ready = true;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    this.setup();
    const results = this.db.transaction(() => operations.map((op) => this.run(op)))();
    return results as OperationResults<Op>;
  }

  private run(op: Operation): unknown {
    if ("value" in op) return this.put1(op);
    if ("namespacePrefix" in op) return this.search1(op);
    if ("namespace" in op) return this.get1(op);
    return this.list1(op);
  }

  private get1(op: GetOperation): Item | null {
    validateNamespace(op.namespace);
    const row = this.db
      .prepare("SELECT prefix, key, value, created_at, updated_at FROM antler_store WHERE tenant = ? AND prefix = ? AND key = ?")
      .get(this.tenant, op.namespace.join("."), op.key) as Row | undefined;
    return row ? itemOf(row) : null;
  }

  private put1(op: PutOperation): void {
    validateNamespace(op.namespace);
    const prefix = op.namespace.join(".");
    if (op.value === null) {
      this.db.prepare("DELETE FROM antler_store WHERE tenant = ? AND prefix = ? AND key = ?").run(this.tenant, prefix, op.key);
      return;
    }
    const now = this.clock();
    this.db
      .prepare(
        `INSERT INTO antler_store (tenant, prefix, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant, prefix, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      )
      .run(this.tenant, prefix, op.key, JSON.stringify(op.value), now, now);
  }

  private search1(op: SearchOperation): SearchItem[] {
    if (op.namespacePrefix.length > 0) validateNamespace(op.namespacePrefix);
    const rows = this.db
      .prepare(`SELECT prefix, key, value, created_at, updated_at FROM antler_store WHERE ${UNDER} ORDER BY created_at DESC, key`)
      .all({ tenant: this.tenant, prefix: op.namespacePrefix.join(".") }) as Row[];
    const words = (op.query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
    const offset = op.offset ?? 0;
    return rows
      .map(itemOf)
      .filter((item) => matchesFilter(item.value, op.filter) && matchesWords(item.value, words))
      .slice(offset, offset + (op.limit ?? 10));
  }

  private list1(op: ListNamespacesOperation): string[][] {
    const rows = this.db.prepare("SELECT DISTINCT prefix FROM antler_store WHERE tenant = ?").all(this.tenant) as {
      prefix: string;
    }[];
    let namespaces = rows.map((r) => r.prefix.split("."));
    namespaces = namespaces.filter((ns) => (op.matchConditions ?? []).every((c) => matches(c, ns)));
    if (op.maxDepth !== undefined) namespaces = namespaces.map((ns) => ns.slice(0, op.maxDepth));
    const unique = [...new Map(namespaces.map((ns) => [ns.join("."), ns])).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, ns]) => ns);
    const offset = op.offset ?? 0;
    return unique.slice(offset, offset + (op.limit ?? unique.length));
  }
}

function itemOf(row: Row): Item {
  return {
    namespace: row.prefix.split("."),
    key: row.key,
    value: JSON.parse(row.value) as Record<string, unknown>,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function matches(condition: MatchCondition, namespace: string[]): boolean {
  const { path, matchType } = condition;
  if (path.length > namespace.length) return false;
  const start = matchType === "prefix" ? 0 : namespace.length - path.length;
  return path.every((label, i) => label === "*" || label === namespace[start + i]);
}

type Operators = Partial<Record<"$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" | "$in" | "$nin", unknown>>;
const OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);

/** LangGraph's filter: a value per top-level key, or operators (`$eq`, `$gt`, `$in`, …) as its in-memory store reads them. */
function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  return Object.entries(filter ?? {}).every(([key, wanted]) => {
    const have = value[key];
    const ops = wanted && typeof wanted === "object" && !Array.isArray(wanted) ? (wanted as Operators) : undefined;
    if (!ops || !Object.keys(ops).every((k) => OPERATORS.has(k))) return JSON.stringify(have) === JSON.stringify(wanted);
    return Object.entries(ops).every(([op, arg]) => compare(op, have, arg));
  });
}

function compare(op: string, have: unknown, arg: unknown): boolean {
  switch (op) {
    case "$eq":
      return have === arg;
    case "$ne":
      return have !== arg;
    case "$gt":
      return Number(have) > Number(arg);
    case "$gte":
      return Number(have) >= Number(arg);
    case "$lt":
      return Number(have) < Number(arg);
    case "$lte":
      return Number(have) <= Number(arg);
    case "$in":
      return Array.isArray(arg) && arg.includes(have);
    default:
      return !Array.isArray(arg) || !arg.includes(have);
  }
}

/** Every word of the query somewhere in the value's JSON, case aside (no index: a plain match). */
function matchesWords(value: Record<string, unknown>, words: string[]): boolean {
  if (words.length === 0) return true;
  const text = JSON.stringify(value).toLowerCase();
  return words.every((w) => text.includes(w));
}
