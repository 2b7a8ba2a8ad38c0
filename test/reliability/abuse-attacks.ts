/**
 * The bad requests of the HTTP abuse probe, per route, and a record of what came back. Every
 * route gets malformed JSON, authentic JSON of the wrong shape, wrong content types, forged and
 * replayed signatures (where the route has them), a wrong method, broken paths and a huge
 * header; bodies are made authentic where the platform signs them, so they reach the parser.
 */
import type { Answer, Req } from "./abuse-client.js";
import type { Route } from "./abuse-targets.js";
import { tally } from "./util.js";

export interface Attack {
  attack: string;
  req: Req;
}

const MALFORMED = '{"update_id": 1, "message": {"text": "unterminated';
const SHAPES = ["null", "[]", "42", '"text"', "{}", '{"type":"x"}'];
const CONTENT_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"];
const THREE_DAYS_MS = 3 * 24 * 3600_000;
const WEBHOOK = /^\/(webhooks|slack|dingtalk)\//;

export function attacksOn(r: Route): Attack[] {
  const out: Attack[] = [];
  const add = (attack: string, body: string | undefined, headers: Record<string, string>, method = r.method, path = r.path) =>
    out.push({ attack, req: { method, path, headers, ...(body !== undefined ? { body } : {}) } });
  add("malformed JSON", MALFORMED, r.sign(MALFORMED));
  const wrapped = r.wrap(MALFORMED);
  if (wrapped !== MALFORMED) add("malformed JSON (encrypted)", wrapped, r.sign(wrapped));
  for (const shape of SHAPES) {
    const body = r.wrap(shape);
    add("authentic JSON of the wrong shape", body, r.sign(body));
  }
  const body = r.wrap('{"type":"x"}');
  for (const type of CONTENT_TYPES) add("wrong content type", body, { ...r.sign(body), "content-type": type });
  const { "content-type": _dropped, ...noType } = r.sign(body);
  add("no content type", body, noType);
  if (r.forge) {
    const valid = r.valid?.() ?? "";
    add("forged signature", valid, r.forge(valid));
    add("no signature", valid, { "content-type": "application/json" });
  }
  if (r.replay && r.valid) {
    const old = r.valid(Date.now() - THREE_DAYS_MS);
    add("replayed signature (old timestamp)", old, r.replay(old));
  }
  add("wrong method", undefined, {}, r.method === "GET" ? "DELETE" : "GET");
  add("broken percent-encoding", undefined, r.sign(""), r.method, `${r.path}/%E0%A4%A`);
  add("20 KB URL", undefined, r.sign(""), r.method, `${r.path}?q=${"x".repeat(20_000)}`);
  add("20 KB header", undefined, { ...r.sign(""), "x-junk": "a".repeat(20_000) });
  return out;
}

/** The i-th of many parallel bad requests: forged, malformed or wrongly shaped, round the routes. */
export function parallelAttack(routes: Route[], i: number): Attack {
  const r = routes[i % routes.length] as Route;
  const kind = Math.floor(i / routes.length) % 3;
  if (kind === 0 && r.forge) {
    const valid = r.valid?.() ?? "";
    return { attack: "parallel forged", req: { method: r.method, path: r.path, headers: r.forge(valid), body: valid } };
  }
  const body = r.wrap(kind === 1 ? MALFORMED : '{"type":"x"}');
  const attack = kind === 1 ? "parallel malformed JSON" : "parallel JSON of the wrong shape";
  return { attack, req: { method: r.method, path: r.path, headers: r.sign(body), body } };
}

/** What each route answered, by attack. */
export class AbuseLog {
  private readonly entries: Array<{ path: string; attack: string; answer: Answer }> = [];

  add(path: string, attack: string, answer: Answer): void {
    this.entries.push({ path, attack, answer });
  }

  get size(): number {
    return this.entries.length;
  }

  /** One line per route: how many requests, and the statuses (or errors) seen. */
  perRoute(): string[] {
    const paths = [...new Set(this.entries.map((e) => e.path))];
    return paths.map((path) => {
      const mine = this.entries.filter((e) => e.path === path);
      const seen = [...tally(mine.map((e) => String(e.answer.status ?? e.answer.error))).entries()]
        .sort()
        .map(([k, n]) => `${k}×${n}`);
      return `${path}: ${mine.length} requests → ${seen.join(", ")}`;
    });
  }

  /** Bad input a webhook route answered with 2xx (not a failure: some platforms want a 200 to stop retries). */
  accepted(): string[] {
    const ok = this.entries.filter((e) => WEBHOOK.test(e.path) && (e.answer.status ?? 0) >= 200 && (e.answer.status ?? 0) < 300);
    return [...tally(ok.map((e) => `${e.path} ${e.attack}`)).entries()].map(([k, n]) => `2xx to bad input: ${k} (${n}×)`);
  }

  /** 5xx answers, resets and timeouts, grouped by route and attack. */
  failures(): string[] {
    const bad = this.entries.filter((e) => e.answer.error !== undefined || (e.answer.status ?? 0) >= 500);
    const keys = bad.map((e) => `${e.path} ${e.attack} → ${e.answer.status ?? e.answer.error}`);
    return [...tally(keys).entries()].map(([k, n]) => `${k} (${n}×)`);
  }
}
