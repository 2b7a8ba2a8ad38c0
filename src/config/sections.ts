/**
 * The shape of config.yaml. Keys are snake_case; unknown keys are errors everywhere except
 * where a section passes options straight through to a plugin (model provider options, and a
 * channel's own keys, which the channel's schema checks when the registry loads it).
 */
import { z } from "zod";
import { FollowupsLayer, ProgressLayer } from "./followups.js";
import { GUARDRAILS_MISSING, GuardrailsConfig } from "./guardrails.js";
import { MemoryConfig } from "./memory.js";
import { OutboxConfig } from "./outbox.js";
import { RemoteAgentConfig } from "./remote.js";
import { SchedulesConfig } from "./schedules.js";
import { AgentSkills, SkillPaths, SkillsConfig } from "./skills.js";
import { SubagentsConfig } from "./subagents.js";

import { bool, idList, num } from "./values.js";

export { bool, idList, num, RemoteAgentConfig };

export const ServerConfig = z
  .strictObject({
    host: z.string().default("127.0.0.1"),
    port: num().pipe(z.number().int().min(0).max(65535)).default(8787),
    admin_token: z.string().optional(),
    headers_timeout_ms: num().pipe(z.number().int().positive()).default(10_000),
    request_timeout_ms: num().pipe(z.number().int().positive()).default(30_000),
    keep_alive_timeout_ms: num().pipe(z.number().int().positive()).default(5_000),
    max_connections: num().pipe(z.number().int().positive()).default(1_000),
    max_body_bytes: num().pipe(z.number().int().positive()).default(1_048_576),
  })
  .superRefine((server, ctx) => {
    // Node refuses to start a server whose header timeout is longer than its request timeout.
    if (server.headers_timeout_ms > server.request_timeout_ms) {
      ctx.addIssue({
        code: "custom",
        path: ["headers_timeout_ms"],
        message: `must not be longer than server.request_timeout_ms (${server.request_timeout_ms}): lower it or raise that`,
      });
    }
  })
  .prefault({});

export const StorageConfig = z
  .strictObject({
    /** `sqlite`: one process, one file at `path`. `postgres`: the database at `url`, shared by every replica. */
    kind: z.enum(["sqlite", "postgres"]).default("sqlite"),
    path: z.string().default("./data/antler.db"),
    /**
     * Folder of the files users send, one folder per thread; default: `files` beside `path`. The
     * gateway stores them; the agent reads them (`read_file`) and sends them back (`send_file`);
     * no built-in tool writes there.
     */
    files: z.string().optional(),
    synchronous: z.enum(["normal", "full"]).default("normal"),
    /** `latest`: each thread keeps its newest state only (src/storage/README.md); `all`: every step's checkpoint. */
    checkpoint_history: z.enum(["latest", "all"]).default("latest"),
    /** The PostgreSQL database (`postgres://user:password@host:5432/db`); required when kind is postgres. */
    url: z.string().optional(),
    /**
     * Most connections each pool opens (one pool per tenant, and one for the checkpoints). The
     * default lets 3 replicas with 2 tenants fit PostgreSQL's default max_connections of 100.
     */
    pool_size: num().pipe(z.number().int().min(2)).default(8),
  })
  .superRefine((storage, ctx) => {
    if (storage.kind !== "postgres") return;
    if (!storage.url) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message:
          "is required when storage.kind is postgres: set it to postgres://user:password@host:5432/database (e.g. url: ${DATABASE_URL})",
      });
    } else if (!/^postgres(ql)?:\/\//.test(storage.url)) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: "must be a postgres:// URL (postgres://user:password@host:5432/database)",
      });
    }
  })
  .prefault({});

export const LoggingConfig = z
  .strictObject({
    level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
    format: z.enum(["auto", "json", "pretty"]).default("auto"),
  })
  .prefault({});

/** One chat model. Keys besides the named ones are provider options passed to the class. */
export const ModelConfig = z.looseObject({
  name: z.string().min(1),
  use: z.string().default("@langchain/openai:ChatOpenAI"),
  model: z.string().min(1),
  api_key: z.string().optional(),
  base_url: z.string().optional(),
  temperature: num().optional(),
  max_tokens: num().pipe(z.number().int().positive()).optional(),
  max_retries: num().pipe(z.number().int().min(0)).optional(),
  supports_thinking: bool().optional(),
  /** The model reads images: photos users send go to it as image blocks. */
  supports_vision: bool().default(false),
  stream_idle_timeout_ms: num().pipe(z.number().int().positive()).optional(),
  when_thinking_enabled: z.record(z.string(), z.unknown()).optional(),
  display_name: z.string().optional(),
});

export const ToolConfig = z.strictObject({
  name: z.string().min(1),
  use: z.string().min(1),
  group: z.string().optional(),
});

/** One MCP server whose tools the agent gets. stdio needs `command`; http and sse need `url`. */
export const McpServerConfig = z
  .strictObject({
    enabled: bool().default(true),
    transport: z.enum(["stdio", "http", "sse"]).default("stdio"),
    command: z.string().optional(),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
    url: z.string().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    timeout_ms: num().pipe(z.number().int().positive()).default(10_000),
    tool_timeout_ms: num().pipe(z.number().int().positive()).default(60_000),
    tool_prefix: z.string().optional(),
  })
  .superRefine((server, ctx) => {
    if (!server.enabled) return;
    if (server.transport === "stdio" && !server.command) {
      ctx.addIssue({ code: "custom", path: ["command"], message: "is required for transport stdio: set the program to run" });
    }
    if (server.transport !== "stdio" && !server.url) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: `is required for transport ${server.transport}: set the server URL`,
      });
    }
  });

/**
 * Feature switches of the lead agent's middleware chain. The SDK factory (`createAntlerAgent`)
 * keeps DeerFlow's defaults (only loop detection on); the app turns the cheap safety nets on too.
 */
export const FeaturesConfig = z
  .strictObject({
    dangling_tool_calls: bool().default(true),
    tool_errors: bool().default(true),
    loop_detection: bool().default(true),
    message_id_guard: bool().default(true),
    dynamic_context: bool().default(false),
    title: bool().default(false),
    summarization: bool().default(false),
    /** The tool-call policy in `agent.guardrails` (config/guardrails.ts). */
    guardrails: bool().default(false),
    /** A to-do list the agent keeps (`write_todos`), shown as the plan in the progress view. */
    plan_mode: bool().default(false),
    /** The `task` tool: hand work to a subagent named under `subagents:`. */
    subagents: bool().default(false),
    memory: bool().default(false),
  })
  .prefault({});

/** What a person may decide about a paused tool call. */
export const ApprovalDecision = z.enum(["approve", "edit", "reject"]);

/**
 * Approval of one tool (or glob) in `agent.approvals`: the decisions offered, who besides the
 * asker may decide (read by the chat layer), and how long the call waits before it is rejected.
 */
export const ApprovalRule = z.preprocess(
  // `send_email:` with nothing after it (YAML null) takes every default.
  (v) => (v === null ? {} : v),
  z.strictObject({
    decisions: z
      .array(ApprovalDecision)
      .min(1, "needs at least one decision: approve, edit or reject")
      .default(["approve", "reject"]),
    /** Platform user ids who may decide besides the asker. */
    approvers: idList().default([]),
    timeout_ms: num().pipe(z.number().int().positive()).default(600_000),
  }),
);

/** Tool names or globs (`*` matches any run of characters: `send_*`, `*`) → their rules. */
const Approvals = z
  .record(z.string(), ApprovalRule)
  .superRefine((rules, ctx) => {
    for (const key of Object.keys(rules)) {
      if (/^[A-Za-z0-9_.:*-]+$/.test(key)) continue;
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: "must be a tool name or a glob of letters, digits, _ . : - and *, e.g. send_*",
      });
    }
  })
  .default({});

/** The agent backends Antler brings (src/harness/backends.ts); any other `backend` is a class of your own. */
export const BUILTIN_BACKENDS = ["embedded", "graph", "remote"] as const;
export type BuiltinBackend = (typeof BUILTIN_BACKENDS)[number];

/** A built-in backend's name, or `"module:Export"` of a class implementing `Harness`. */
const Backend = z
  .string()
  .refine((v) => (BUILTIN_BACKENDS as readonly string[]).includes(v) || /^.+:[^:]+$/.test(v), {
    message: `must be ${BUILTIN_BACKENDS.join(", ")}, or "module:Export" of a Harness class of your own (relative to this file)`,
  })
  .default("embedded");

export const AgentConfig = z
  .strictObject({
    backend: Backend,
    graph: z.string().optional(),
    remote: RemoteAgentConfig.optional(),
    /** Settings of a backend of your own (`backend: "module:Export"`), handed to it as they are. */
    options: z.record(z.string(), z.unknown()).optional(),
    name: z.string().default("antler"),
    /** One line shown next to the agent's name by `/agent`. */
    description: z.string().optional(),
    model: z.string().optional(),
    /** Names from `tools:` this agent gets; all of them when absent. */
    tools: z.array(z.string()).optional(),
    /** Names from `mcp_servers:` whose tools this agent gets; all its tenant may use when absent. */
    mcp_servers: z.array(z.string()).optional(),
    system_prompt: z.string().default("You are a helpful assistant. Answer concisely."),
    recursion_limit: num().pipe(z.number().int().positive()).default(50),
    thinking: bool().default(false),
    features: FeaturesConfig,
    /** Memory per person, used when `features.memory` is on (config/memory.ts). */
    memory: MemoryConfig,
    /** Tools (names or globs) that wait for a person's decision before they run; exact names win over globs. */
    approvals: Approvals,
    /** Names of the skills this agent gets (config/skills.ts). */
    skills: AgentSkills,
    guardrails: GuardrailsConfig.optional(),
    /** One run's limits (harness/middleware/token-budget.ts): then its tool calls stop; unset = no limit. */
    max_tokens_per_run: num().pipe(z.number().int().positive()).optional(),
    max_tool_calls_per_run: num().pipe(z.number().int().positive()).optional(),
    /** The subagents of `features.subagents` (src/config/subagents.ts). */
    subagents: SubagentsConfig,
  })
  .superRefine((agent, ctx) => {
    if (agent.features.guardrails && !agent.guardrails) {
      ctx.addIssue({ code: "custom", path: ["guardrails"], message: GUARDRAILS_MISSING });
    }
    if (agent.backend === "graph" && !agent.graph) {
      ctx.addIssue({
        code: "custom",
        path: ["graph"],
        message: 'is required when agent.backend is graph: set it to "./my-graph.js:graph" (relative to this file)',
      });
    }
    if (agent.backend === "remote" && !agent.remote) {
      ctx.addIssue({
        code: "custom",
        path: ["remote"],
        message: "is required when agent.backend is remote: set remote.url and remote.assistant_id",
      });
    }
  })
  .prefault({});

/** Settings of the shared channel core (queues, concurrency). */
export const GatewayConfig = z
  .strictObject({
    max_concurrent_runs: num().pipe(z.number().int().positive()).default(64),
    /** A reply whose stream stops this long mid-text gives up its run slot until it streams again (see src/channels/README.md). */
    stall_release_ms: num().pipe(z.number().int().positive()).default(1_000),
    queue_size: num().pipe(z.number().int().positive()).default(5),
    run_timeout_ms: num().pipe(z.number().int().positive()).default(600_000),
    platform_call_timeout_ms: num().pipe(z.number().int().positive()).default(30_000),
    delivery_retry_ms: num().pipe(z.number().int().positive()).default(60_000),
    replay_window_ms: num().pipe(z.number().int().min(0)).default(600_000),
    typing_delay_ms: num().pipe(z.number().int().min(0)).default(500),
    drain_ms: num().pipe(z.number().int().min(0)).default(5_000),
    /** What a message does that arrives while the conversation's last one is answered (config/followups.ts); channels and routes may set it again. */
    followups: FollowupsLayer.optional(),
    /** What the reply shows of the agent's work while it runs (config/followups.ts); channels and routes may set it again. */
    progress: ProgressLayer.optional(),
  })
  .prefault({});

/**
 * Every channel section has `enabled` and an optional `use` override; the rest of its keys are
 * checked by the channel's own schema when the registry loads it.
 */
export const ChannelSection = z.looseObject({
  enabled: bool().default(false),
  use: z.string().optional(),
  /** The core's follow-up settings for this channel's chats (config/followups.ts). */
  followups: FollowupsLayer.optional(),
  /** The core's progress view for this channel's replies (config/followups.ts). */
  progress: ProgressLayer.optional(),
});

/** Keys of a channel section the core reads; the channel's own schema never sees them. */
export const CORE_CHANNEL_KEYS = ["enabled", "use", "followups", "progress"] as const;

/** Ids to match: one value or a list; a message matches when its value is any of them. */
const matchList = () => idList().pipe(z.array(z.string()));

/** One routing rule: which agent serves the chats it matches. Every matcher given must match. */
export const RouteRule = z.strictObject({
  agent: z.string().min(1),
  /** Channel names (keys under `channels:`). */
  channel: matchList().optional(),
  /** Platform chat ids (Telegram chat id, Slack channel id, Feishu chat_id, DingTalk conversationId). */
  chat: matchList().optional(),
  /** Platform user ids of the sender. */
  user: matchList().optional(),
  /** Slack team id, Feishu tenant key, DingTalk corp id, Discord guild id. */
  workspace: matchList().optional(),
  /** `direct` (a one-to-one chat) or `group`; `dm` is the deprecated old name of `direct`. */
  chat_type: z.preprocess((v) => (typeof v === "string" ? [v] : v), z.array(z.enum(["direct", "group", "dm"]))).optional(),
  /** False: `/agent` cannot switch the chats this rule matches. */
  allow_switch: bool().default(true),
  /** The agents `/agent` offers in these chats; every agent of the chat's tenant when absent. */
  switch_to: z.array(z.string()).optional(),
  /** Follow-up settings for the chats this rule matches (config/followups.ts). */
  followups: FollowupsLayer.optional(),
  /** Progress view for the chats this rule matches (config/followups.ts). */
  progress: ProgressLayer.optional(),
});

/** A tenant: channels, agents and MCP servers kept apart from every other tenant's. */
export const TenantConfig = z.strictObject({
  channels: z.array(z.string()).default([]),
  agents: z.array(z.string()).default([]),
  mcp_servers: z.array(z.string()).default([]),
  /** The agent of its chats that no route matches; the default agent (`agent:`) when absent. */
  default_agent: z.string().optional(),
  /** Sees and restarts only this tenant's channels, and reads only its usage. */
  admin_token: z.string().optional(),
  /** Folders of this tenant's own skills (config/skills.ts), beside the shared `skills.paths`. */
  skills: SkillPaths.default([]),
});

/** Where voice notes become text: any OpenAI-compatible `/audio/transcriptions` endpoint. */
export const TranscriptionConfig = z.strictObject({
  /** Base URL ending before `/audio/transcriptions`, e.g. `https://api.openai.com/v1`. Unset = voice is not transcribed. */
  base_url: z
    .union([z.literal(""), z.string().url()])
    .optional()
    .transform((v) => v || undefined),
  api_key: z.string().optional(),
  model: z.string().default("whisper-1"),
  /** Also post the transcript in the chat, so the user sees what was understood. */
  echo: bool().default(false),
  timeout_ms: num().pipe(z.number().int().positive()).default(60_000),
});

/** Files, images and voice that users send, and files the agent sends back. */
export const MediaConfig = z
  .strictObject({
    /** Largest file taken from a chat or sent to it, in MiB (1 MiB = 1,048,576 bytes). */
    max_file_mb: num().pipe(z.number().positive()).default(20),
    /**
     * How long one attachment's download may take, from its first request to its last byte; past
     * it the download is aborted and the user gets a notice naming the file.
     */
    download_timeout_ms: num().pipe(z.number().int().positive()).default(30_000),
    /** MIME types taken, exact or with a `/*` wildcard; others get a notice. */
    allowed_types: z
      .array(z.string())
      .default(["image/*", "audio/*", "text/*", "application/pdf", "application/json", "application/octet-stream"]),
    transcription: TranscriptionConfig.prefault({}),
  })
  .prefault({});

export const AppConfigShape = z.strictObject({
  server: ServerConfig,
  storage: StorageConfig,
  media: MediaConfig,
  logging: LoggingConfig,
  models: z.array(ModelConfig).default([]),
  tools: z.array(ToolConfig).default([]),
  mcp_servers: z.record(z.string(), McpServerConfig).default({}),
  agent: AgentConfig,
  agents: z.record(z.string(), AgentConfig).default({}),
  routes: z.array(RouteRule).default([]),
  tenants: z.record(z.string(), TenantConfig).default({}),
  gateway: GatewayConfig,
  outbox: OutboxConfig,
  channels: z.record(z.string(), ChannelSection).default({}),
  schedules: SchedulesConfig,
  skills: SkillsConfig,
});

export type AppConfig = z.output<typeof AppConfigShape>;
export type ModelConfig = z.output<typeof ModelConfig>;
export type MediaConfig = z.output<typeof MediaConfig>;
export type ToolConfig = z.output<typeof ToolConfig>;
export type McpServerConfig = z.output<typeof McpServerConfig>;
export type AgentConfig = z.output<typeof AgentConfig>;
export type FeaturesConfig = z.output<typeof FeaturesConfig>;
export type ApprovalRule = z.output<typeof ApprovalRule>;
export type ApprovalDecision = z.output<typeof ApprovalDecision>;
export type GatewayConfig = z.output<typeof GatewayConfig>;
export type ChannelSection = z.output<typeof ChannelSection>;
export type RouteRule = z.output<typeof RouteRule>;
export type TenantConfig = z.output<typeof TenantConfig>;
