/**
 * Token usage since the gateway started, per tenant, agent, model and kind, for `GET /api/usage`.
 * It lives in memory and starts empty after a restart; Prometheus (`antler_model_tokens_total`)
 * is the durable record.
 */
import type { ModelUsage, UsageKind } from "../harness/usage.js";

/** Who a model call was made for. */
export interface UsageLabels {
  tenant: string;
  agent: string;
}

/** Calls and tokens summed over some model calls. Snake case: this is the API's shape. */
export interface UsageCounts {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** The usage of one model, for one kind of call, of one agent of one tenant. */
export interface UsageRow extends UsageLabels, UsageCounts {
  model: string;
  kind: UsageKind;
}

/** What `GET /api/usage` answers. */
export interface UsageSnapshot {
  /** When counting began (the gateway's start), ISO 8601. */
  since: string;
  /** Sorted by tenant, agent, model, then kind. */
  rows: UsageRow[];
  /** The sum of `rows`. */
  totals: UsageCounts;
}

/** Which rows a snapshot holds; all of them when a field is absent. */
export interface UsageFilter {
  tenant?: string;
}

const KIND_ORDER: readonly UsageKind[] = ["chat", "title", "summarization", "subagent", "memory"];

function zero(): UsageCounts {
  return { calls: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 };
}

function add(counts: UsageCounts, more: UsageCounts): void {
  counts.calls += more.calls;
  counts.input_tokens += more.input_tokens;
  counts.output_tokens += more.output_tokens;
  counts.total_tokens += more.total_tokens;
}

function compareRows(a: UsageRow, b: UsageRow): number {
  const text = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return (
    text(a.tenant, b.tenant) ||
    text(a.agent, b.agent) ||
    text(a.model, b.model) ||
    KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind)
  );
}

/** Sums model usage per tenant, agent, model and kind. */
export class UsageLedger {
  readonly #since = new Date().toISOString();
  readonly #rows = new Map<string, UsageRow>();

  /** Counts one model call. */
  record(labels: UsageLabels, usage: ModelUsage): void {
    const key = JSON.stringify([labels.tenant, labels.agent, usage.model, usage.kind]);
    let row = this.#rows.get(key);
    if (!row) {
      row = { tenant: labels.tenant, agent: labels.agent, model: usage.model, kind: usage.kind, ...zero() };
      this.#rows.set(key, row);
    }
    add(row, { calls: 1, input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, total_tokens: usage.totalTokens });
  }

  /** The rows `filter` selects, sorted, with their totals; copies, so the caller may keep them. */
  snapshot(filter: UsageFilter = {}): UsageSnapshot {
    const rows = [...this.#rows.values()]
      .filter((r) => filter.tenant === undefined || r.tenant === filter.tenant)
      .map((r) => ({ ...r }))
      .sort(compareRows);
    const totals = zero();
    for (const row of rows) add(totals, row);
    return { since: this.#since, rows, totals };
  }
}
