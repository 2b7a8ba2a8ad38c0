/**
 * Chat models from config: `models[].use` names a BaseChatModel subclass ("module:Export"), the
 * remaining keys become its constructor options. The first model is the default.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AppConfig, ModelConfig } from "../../config/schema.js";
import { ConfigError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { resolveClass } from "../../reflection/index.js";
import { withoutCredentials } from "./endpoint.js";
import { stallGuardedFetch } from "./stall-guard.js";

export interface CreateChatModelOptions {
  /** Turn the model's reasoning mode on (merges `when_thinking_enabled`); ignored when `supports_thinking: false`. */
  thinking?: boolean;
  /** Folder relative `use:` paths resolve against. */
  baseDir?: string;
  logger?: Logger;
}

/** Retries of a failed model request when the config does not say. */
export const DEFAULT_MAX_RETRIES = 2;

/** Keys Antler reads itself; everything else is handed to the model class. */
const OWN_KEYS = new Set([
  "name",
  "use",
  "model",
  "api_key",
  "base_url",
  "temperature",
  "max_tokens",
  "max_retries",
  "supports_thinking",
  "supports_vision",
  "display_name",
  "when_thinking_enabled",
  "stream_idle_timeout_ms",
]);

/** How long a model stream may send nothing before it counts as stalled, when the config does not say. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 60_000;

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Picks the model entry by name; no name gives the first, an unknown name the first with a warning. */
export function selectModel(models: readonly ModelConfig[], name?: string, logger?: Logger): ModelConfig {
  const first = models[0];
  if (!first) {
    throw new ConfigError([{ path: "models", message: "no model configured: add at least one entry under models:" }]);
  }
  if (!name) return first;
  const found = models.find((m) => m.name === name);
  if (found) return found;
  logger?.warn({ requested: name, using: first.name }, "unknown model name; using the default model");
  return first;
}

/** Constructor options for the model class, from one models[] entry. */
export function modelOptions(entry: ModelConfig, className: string, thinking: boolean): Record<string, unknown> {
  const options: Record<string, unknown> = { model: entry.model, maxRetries: entry.max_retries ?? DEFAULT_MAX_RETRIES };
  if (entry.api_key !== undefined) options.apiKey = entry.api_key;
  if (entry.temperature !== undefined) options.temperature = entry.temperature;
  if (entry.max_tokens !== undefined) options.maxTokens = entry.max_tokens;
  if (entry.base_url !== undefined) {
    // OpenAI-style clients take the endpoint inside `configuration`; others take a top-level baseUrl.
    if (/openai/i.test(className)) options.configuration = { baseURL: entry.base_url };
    else options.baseUrl = entry.base_url;
  }
  for (const [key, value] of Object.entries(entry)) {
    if (!OWN_KEYS.has(key) && value !== undefined) options[camel(key)] = value;
  }
  if (/openai/i.test(className)) {
    options.streamUsage = true;
    // The OpenAI client takes its fetch inside `configuration`: there a stalled stream is noticed.
    const timeout = typeof entry.timeout === "number" ? entry.timeout : Number.POSITIVE_INFINITY;
    const idle = Math.min(entry.stream_idle_timeout_ms ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS, timeout);
    const configuration = (options.configuration ?? {}) as Record<string, unknown>;
    options.configuration = { ...configuration, fetch: stallGuardedFetch(idle) };
  }
  if (thinking) {
    for (const [key, value] of Object.entries(entry.when_thinking_enabled ?? {})) options[camel(key)] = value;
  }
  return options;
}

/** Builds the chat model named `name` (or the default one) from `config.models`. */
export async function createChatModel(
  config: Pick<AppConfig, "models">,
  name?: string,
  options: CreateChatModelOptions = {},
): Promise<BaseChatModel> {
  const entry = selectModel(config.models, name, options.logger);
  const ModelClass = await resolveClass<new (fields: Record<string, unknown>) => BaseChatModel>(entry.use, BaseChatModel, {
    baseDir: options.baseDir,
  });
  let thinking = options.thinking === true;
  if (thinking && entry.supports_thinking === false) {
    options.logger?.warn({ model: entry.name }, "thinking requested but the model has supports_thinking: false; leaving it off");
    thinking = false;
  }
  return new ModelClass(modelOptions(entry, ModelClass.name, thinking));
}

/** A model endpoint as logs and banners show it: without a user name or password in it. */
export function endpointForLog(url: string | undefined): string | undefined {
  return url === undefined ? undefined : withoutCredentials(url);
}

/** What the default agent runs on, as the start log and the terminal chat's banner say it. */
export interface AgentSummary {
  /** `embedded`, `graph`, `remote` or a `"module:Export"` backend. */
  backend: string;
  /** The models[] entry's name and the model id it asks for (embedded agents only). */
  model?: string;
  model_id?: string;
  /** The model's endpoint, without credentials. */
  base_url?: string;
}

/** The default agent's backend and, for an embedded one, its model and endpoint; never throws. */
export function agentSummary(config: Pick<AppConfig, "models" | "agent">): AgentSummary {
  const backend = config.agent.backend;
  if (backend !== "embedded") return { backend };
  const entry = config.models.find((m) => m.name === config.agent.model) ?? config.models[0];
  if (!entry) return { backend };
  return { backend, model: entry.name, model_id: entry.model, base_url: endpointForLog(entry.base_url) };
}
