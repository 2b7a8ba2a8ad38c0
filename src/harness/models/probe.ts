/**
 * Whether a model endpoint can serve the agent: `GET <base_url>/models`, which every
 * OpenAI-compatible server answers. `antler doctor` probes once; the embedded agent's status
 * probes through a `ModelProber`, which caches the answer so a status page refreshing every few
 * seconds does not hammer the endpoint.
 *
 * The detail is for the operator: it may name the URL (the gateway scrubs secrets from status),
 * never the key, and it says which config key to set. Where the value comes from (an environment
 * variable, or the key in a named file) is said only when the caller knows it (`ModelHints`).
 */
import type { ModelConfig } from "../../config/schema.js";
import { errorMessage } from "../../errors.js";
import { withoutCredentials } from "./endpoint.js";

/** `unprobed`: no base_url (another provider class), so nothing to ask. */
export type ModelProbeOutcome = "ok" | "unreachable" | "rejected" | "error" | "unprobed";

export interface ModelProbeResult {
  outcome: ModelProbeOutcome;
  /** One line: what answered, or what is wrong and which key to set. */
  detail: string;
  /** When the probe ran (ISO time). */
  at: string;
}

/**
 * Where a model's `base_url` and `api_key` come from in the config actually loaded: the variable a
 * `${VAR}` reads (`OPENAI_BASE_URL`), or the key in the file (`models[0].base_url in /srv/config.yaml`).
 */
export interface ModelHints {
  base_url?: string;
  api_key?: string;
}

/** "check its base_url", and where it comes from when known. */
function checkIts(key: keyof ModelHints, hints: ModelHints): string {
  const from = hints[key];
  return from ? `check its ${key} (${from})` : `check its ${key}`;
}

/** How long a status probe waits for the endpoint. */
export const PROBE_TIMEOUT_MS = 3_000;
/** How long a status probe's answer is reused. */
export const PROBE_CACHE_MS = 12_000;

/** True when the outcome means the agent cannot get an answer from its model. */
export function blocksAgent(outcome: ModelProbeOutcome): boolean {
  return outcome === "unreachable" || outcome === "rejected";
}

/** The innermost network error's text: `connect ECONNREFUSED 127.0.0.1:9`, not `fetch failed`. */
function networkCause(err: unknown): string {
  let current = err as { cause?: unknown; errors?: unknown[] } | undefined;
  for (let depth = 0; depth < 5 && current?.cause; depth++) current = current.cause as typeof current;
  const first = current?.errors?.[0];
  return errorMessage(first ?? current ?? err);
}

/** Asks the model's endpoint once; never throws. */
export async function probeModel(
  model: ModelConfig,
  timeoutMs = PROBE_TIMEOUT_MS,
  hints: ModelHints = {},
): Promise<ModelProbeResult> {
  const at = () => new Date().toISOString();
  if (!model.base_url) {
    return { outcome: "unprobed", detail: `${model.model} via ${model.use} (no base_url to probe)`, at: at() };
  }
  const target = `${model.base_url.replace(/\/+$/, "")}/models`;
  const url = withoutCredentials(target);
  const headers: Record<string, string> = model.api_key ? { authorization: `Bearer ${model.api_key}` } : {};
  let status: number;
  try {
    const res = await fetch(target, { headers, signal: AbortSignal.timeout(timeoutMs) });
    status = res.status;
    await res.body?.cancel();
  } catch (err) {
    const why = (err as { name?: string }).name === "TimeoutError" ? `no answer within ${timeoutMs / 1000} s` : networkCause(err);
    const detail = `${url} is not reachable (${why}); ${checkIts("base_url", hints)}`;
    return { outcome: "unreachable", detail, at: at() };
  }
  if (status === 401 || status === 403) {
    const detail = `${url} rejected the API key (HTTP ${status}); ${checkIts("api_key", hints)}`;
    return { outcome: "rejected", detail, at: at() };
  }
  if (status >= 500) return { outcome: "error", detail: `${url} answered HTTP ${status}`, at: at() };
  return { outcome: "ok", detail: `${model.model} at ${withoutCredentials(model.base_url)} is reachable`, at: at() };
}

/** One model's probe, reused for `cacheMs`; callers at the same time share one request. */
export class ModelProber {
  #last: { result: ModelProbeResult; until: number } | undefined;
  #running: Promise<ModelProbeResult> | undefined;

  constructor(
    readonly model: ModelConfig,
    private readonly options: { cacheMs?: number; timeoutMs?: number } = {},
  ) {}

  async check(): Promise<ModelProbeResult> {
    if (this.#last && Date.now() < this.#last.until) return this.#last.result;
    this.#running ??= probeModel(this.model, this.options.timeoutMs ?? PROBE_TIMEOUT_MS).then((result) => {
      this.#last = { result, until: Date.now() + (this.options.cacheMs ?? PROBE_CACHE_MS) };
      this.#running = undefined;
      return result;
    });
    return this.#running;
  }
}
