/**
 * `agent.remote`: an agent on a LangGraph API server (LangGraph Platform, `langgraph dev`, a
 * DeerFlow gateway), and what Antler sends it besides the message: the run `context` (who is
 * talking, and the switches a DeerFlow server reads) and where the files a run presents are
 * fetched from (`artifacts`).
 */
import { z } from "zod";
import { bool, num } from "./values.js";

/** The run context DeerFlow's own channels send with every run (its `DEFAULT_RUN_CONTEXT`). */
export const DEERFLOW_RUN_CONTEXT: Readonly<Record<string, unknown>> = {
  thinking_enabled: true,
  is_plan_mode: false,
  subagent_enabled: false,
};

/** DeerFlow's gateway route for a thread's files, under the LangGraph-compatible `/api` (`remote.url`). */
export const DEFAULT_ARTIFACTS_URL = "{url}/threads/{thread_id}/artifacts/{path}";

/**
 * Keys added to every run's `context`, under the identity keys (which always win); `false` sends
 * no context at all, for a graph whose context schema refuses keys it does not declare.
 */
const RemoteContext = z
  .preprocess(
    (v) => (v === "false" ? false : v),
    z.union([z.literal(false), z.record(z.string(), z.unknown())], {
      error: "must be a map of context keys, e.g. { is_plan_mode: true }, or false to send no context",
    }),
  )
  .default({ ...DEERFLOW_RUN_CONTEXT });

/** `artifacts: false` turns fetching off; `true` or nothing takes the defaults. */
const RemoteArtifacts = z
  .preprocess(
    (v) => (v === true || v === "true" ? {} : v === false || v === "false" ? { enabled: false } : v),
    z.strictObject({
      enabled: bool().default(true),
      /** Where a presented path is fetched: `{url}` (remote.url), `{thread_id}`, `{path}` (the path without its leading slash). */
      url: z
        .string()
        .refine((u) => u.includes("{path}"), "must contain {path}, e.g. {url}/threads/{thread_id}/artifacts/{path}")
        .default(DEFAULT_ARTIFACTS_URL),
      /** Headers of those requests besides remote.api_key and remote.headers; values may hold `{user_id}` and `{thread_id}`. */
      headers: z.record(z.string(), z.string()).default({}),
    }),
  )
  .prefault({});

/** An agent on a LangGraph API server (LangGraph Platform, `langgraph dev`, a DeerFlow gateway). */
export const RemoteAgentConfig = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: "must be the server's http(s) URL, e.g. http://127.0.0.1:2024" }),
  assistant_id: z.string().min(1, "is required: set a graph id (e.g. agent) or an assistant id"),
  api_key: z.string().optional(),
  headers: z.record(z.string(), z.string()).default({}),
  config: z.record(z.string(), z.unknown()).default({}),
  context: RemoteContext,
  artifacts: RemoteArtifacts,
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).default("enqueue"),
  timeout_ms: num().pipe(z.number().int().positive()).default(30_000),
  stream_subgraphs: bool().default(false),
});

export type RemoteAgentConfig = z.output<typeof RemoteAgentConfig>;
export type RemoteArtifactsConfig = RemoteAgentConfig["artifacts"];
