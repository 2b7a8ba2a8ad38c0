/**
 * One configured MCP server: connects through its own `MultiServerMCPClient` (so servers start,
 * fail and restart independently), gives up after `timeout_ms`, notices when its process dies,
 * and reconnects lazily on the next tool call. It never throws out of `connect()`: a failure is
 * kept as the server's state and error, for status and `antler doctor`.
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import type { Readable } from "node:stream";
import type { DynamicStructuredTool } from "@langchain/core/tools";
import type { Connection, MultiServerMCPClient } from "@langchain/mcp-adapters";
import type { McpServerConfig } from "../../config/schema.js";
import { errorMessage } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { isRunning, stopChild, trackSpawns } from "./children.js";
import { describeConnectError, describeExit, StderrTail } from "./diagnostics.js";

export type McpServerState = "ready" | "failed" | "disabled";

/** What `/api/mcp` and `antler doctor` show for one server. */
export interface McpServerReport {
  name: string;
  enabled: boolean;
  transport: McpServerConfig["transport"];
  state: McpServerState;
  /** Names the model sees for this server's tools. */
  tools: string[];
  /** The last failure (start, crash or reconnect), kept after a recovery until the next one. */
  error: { message: string; at: string } | null;
}

/** The subset of the MCP SDK client this file uses. */
interface ProtocolClient {
  readonly transport?: { stderr?: Readable | null } | undefined;
  ping(options?: { timeout?: number }): Promise<unknown>;
}

interface Live {
  client: MultiServerMCPClient;
  protocol: ProtocolClient | undefined;
  /** The server's tools as the adapter built them, by their name on the server. */
  tools: Map<string, DynamicStructuredTool>;
  children: ChildProcess[];
  /** A health check failed: reconnect before the next call. */
  stale: boolean;
}

export interface McpServerOptions {
  /** Folder of the config file: a relative `cwd` resolves against it, and it is the default cwd. */
  baseDir: string;
  logger: Logger;
}

const PING_TIMEOUT_MS = 2000;

export class McpServer {
  /** Tools as the server listed them on the first successful connect (name, description, schema). */
  listed: DynamicStructuredTool[] = [];
  /** Names the model sees, set once the tools are named. */
  exposed: string[] = [];
  #state: McpServerState;
  #error: { message: string; at: number } | undefined;
  #live: Live | undefined;
  #connecting: Promise<boolean> | undefined;
  readonly #children = new Set<ChildProcess>();
  readonly #logger: Logger;
  #closed = false;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly options: McpServerOptions,
  ) {
    this.#state = config.enabled ? "failed" : "disabled";
    this.#logger = options.logger.child({ mcp: name });
  }

  get state(): McpServerState {
    return this.#state;
  }

  /** Process id of the running stdio server, if there is one. */
  get pid(): number | undefined {
    return this.#live?.children.find(isRunning)?.pid;
  }

  report(): McpServerReport {
    const error = this.#error ? { message: this.#error.message, at: new Date(this.#error.at).toISOString() } : null;
    return {
      name: this.name,
      enabled: this.config.enabled,
      transport: this.config.transport,
      state: this.#state,
      tools: [...this.exposed],
      error,
    };
  }

  /** Connects (or reconnects) and lists the tools. Concurrent callers share one attempt. */
  connect(): Promise<boolean> {
    if (this.#closed || !this.config.enabled) return Promise.resolve(false);
    this.#connecting ??= this.#attempt().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /**
   * Runs `invoke` against the live tool named `tool` (its name on the server), reconnecting first
   * when the server died. Errors read well as a tool result: the model sees them.
   */
  async call<T>(tool: string, invoke: (target: DynamicStructuredTool) => Promise<T>): Promise<T> {
    if (this.#closed) throw new Error(`MCP server "${this.name}" is shut down`);
    if (!this.#alive(this.#live)) {
      this.#logger.info({ tool }, "MCP server is down; restarting it for this call");
      if (!(await this.connect())) {
        throw new Error(`MCP server "${this.name}" is not available: ${this.#error?.message ?? "it did not start"}`);
      }
    }
    const live = this.#live as Live;
    const target = live.tools.get(tool);
    if (!target) throw new Error(`MCP server "${this.name}" no longer offers the tool "${tool}"`);
    try {
      return await invoke(target);
    } catch (err) {
      if (!this.#closed && this.#live === live && !(await this.#healthy(live))) {
        // A link that closed without a process exit (http, sse) has not been recorded yet.
        if (this.#state === "ready") this.#fail(errorMessage(err));
        const reason = this.#error?.message ?? errorMessage(err);
        throw new Error(`MCP server "${this.name}" stopped during the call: ${reason}. It restarts on the next call.`);
      }
      throw err;
    }
  }

  /** Closes the client and stops every process this server started, including a hung one. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const live = this.#live;
    this.#live = undefined;
    if (live) await this.#teardown(live.client, live.children);
    // An attempt still in its handshake is not known to its client yet: stop its process directly.
    await Promise.all([...this.#children].map((child) => stopChild(child)));
    await this.#connecting;
  }

  async #attempt(): Promise<boolean> {
    const old = this.#live;
    this.#live = undefined;
    if (old) await this.#teardown(old.client, old.children);
    const children: ChildProcess[] = [];
    const stderr = new StderrTail((line) => this.#logger.debug({ stderr: line }, "MCP server stderr"));
    const record = (child: ChildProcess) => {
      children.push(child);
      this.#watch(child, stderr);
    };
    const started = Date.now();
    let client: MultiServerMCPClient | undefined;
    try {
      const created = await this.#newClient();
      client = created;
      const loading = trackSpawns(record, () => created.getTools(this.name));
      // After a timeout nobody awaits `loading`; it still settles once the process is stopped.
      loading.catch(() => undefined);
      const tools = await withTimeout(loading, this.config.timeout_ms);
      const protocol = (await created.getClient(this.name)) as ProtocolClient | undefined;
      if (this.#closed) throw new Error("shut down while starting");
      // The adapter pipes stderr into a stream nobody reads; drain it so the server never blocks.
      protocol?.transport?.stderr?.resume();
      this.#live = { client: created, protocol, tools: new Map(tools.map((t) => [t.name, t])), children, stale: false };
      if (this.listed.length === 0) this.listed = tools;
      this.#state = "ready";
      this.#logger.info({ tools: tools.length, ms: Date.now() - started, pid: this.pid }, "MCP server ready");
      return true;
    } catch (err) {
      await this.#teardown(client, children);
      if (!this.#closed) this.#fail(describeConnectError(err, this.config, stderr.last()));
      return false;
    }
  }

  /** The MCP client library is loaded on first use: a gateway without MCP servers never pays for it. */
  async #newClient(): Promise<MultiServerMCPClient> {
    const { MultiServerMCPClient } = await import("@langchain/mcp-adapters");
    return new MultiServerMCPClient({
      mcpServers: { [this.name]: this.#connection() },
      onConnectionError: "throw",
      // A tool whose schema cannot be converted is skipped instead of failing the whole server.
      throwOnLoadError: false,
      // Names are chosen later, across all servers (see naming.ts).
      prefixToolNameWithServerName: false,
      additionalToolNamePrefix: "",
      useStandardContentBlocks: true,
    });
  }

  #connection(): Connection {
    const c = this.config;
    if (c.transport === "stdio") {
      const env = Object.keys(c.env).length > 0 ? { env: c.env } : {};
      return {
        transport: "stdio",
        command: c.command ?? "",
        args: c.args,
        cwd: path.resolve(this.options.baseDir, c.cwd ?? "."),
        stderr: "pipe",
        ...env,
      };
    }
    return { transport: c.transport, url: c.url ?? "", headers: c.headers };
  }

  #watch(child: ChildProcess, stderr: StderrTail): void {
    this.#children.add(child);
    // The stderr pipe exists once spawn() has returned to the transport.
    queueMicrotask(() => child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk)));
    child.once("exit", (code, signal) => {
      this.#children.delete(child);
      if (this.#closed || !this.#live?.children.includes(child)) return;
      this.#fail(describeExit(code, signal, stderr.last()));
    });
    child.once("error", () => this.#children.delete(child));
  }

  #alive(live: Live | undefined): live is Live {
    if (!live || live.stale || !live.protocol?.transport) return false;
    return this.config.transport !== "stdio" || live.children.some(isRunning);
  }

  /** After a failed call: is the connection still good? A ping tells a tool error from a dead link. */
  async #healthy(live: Live): Promise<boolean> {
    if (!this.#alive(live)) return false;
    try {
      await live.protocol?.ping({ timeout: PING_TIMEOUT_MS });
      return true;
    } catch (err) {
      live.stale = true;
      this.#fail(`the server stopped answering (${errorMessage(err)})`);
      return false;
    }
  }

  #fail(message: string): void {
    this.#state = "failed";
    this.#error = { message, at: Date.now() };
    this.#logger.warn({ error: message }, "MCP server failed");
  }

  async #teardown(client: MultiServerMCPClient | undefined, children: ChildProcess[]): Promise<void> {
    await client?.close().catch((err: unknown) => this.#logger.debug({ err }, "MCP client close failed"));
    await Promise.all(children.map((child) => stopChild(child)));
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StartTimeoutError(ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

class StartTimeoutError extends Error {
  override name = "StartTimeoutError";
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}
