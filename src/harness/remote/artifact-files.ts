/**
 * The files a server run presented (artifacts.ts), brought into the chat: each is fetched (a
 * path from the server's artifact route, a URL as given) or decoded (bytes in the state), saved
 * in the thread's folder and put in the gateway's file outbox, which posts it after the reply
 * as `send_file` would. A file that cannot come is logged and gets a notice in the outbox
 * instead, so the user learns of it.
 */
import type { RemoteAgentConfig } from "../../config/remote.js";
import { errorMessage } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import { type AgentFiles, sizeText } from "../files.js";
import { identityOf } from "../middleware/dynamic-context.js";
import type { RunUser } from "../types.js";
import { type Presented, presentedIn } from "./artifacts.js";
import type { RemoteRun } from "./stream.js";

/** Redirects followed for one file. */
const MAX_REDIRECTS = 3;

class TooLarge extends Error {}

export interface ArtifactFilesOptions {
  settings: RemoteAgentConfig;
  /** Where fetched files go; without them (a harness outside a gateway) presented files are only logged. */
  files: AgentFiles | undefined;
  logger: Logger;
}

/** A URL as the log shows it: no credentials, no query. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return "(not a URL)";
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export class ArtifactFiles {
  readonly #o: ArtifactFilesOptions;
  /** Origins that get the server's credentials: the server's and the artifact route's. */
  readonly #trusted: Set<string>;

  constructor(options: ArtifactFilesOptions) {
    this.#o = options;
    const routed = this.urlOf("t", "p") ?? "";
    this.#trusted = new Set([originOf(options.settings.url), originOf(routed)].filter((o): o is string => !!o));
  }

  /** The URL of a presented path; undefined for a path with `.` or `..` parts (it could leave the route). */
  urlOf(threadId: string, path: string): string | undefined {
    const parts = path.split("/").filter(Boolean);
    if (parts.some((p) => p === "." || p === "..")) return undefined;
    const values: Record<string, string> = {
      url: this.#o.settings.url.replace(/\/+$/, ""),
      thread_id: encodeURIComponent(threadId),
      path: parts.map(encodeURIComponent).join("/"),
    };
    return this.#o.settings.artifacts.url.replace(/\{(url|thread_id|path)\}/g, (_, key: string) => values[key] ?? "");
  }

  /** After a run that ended with a reply or a question: the files it presented, into the thread's outbox. Never throws. */
  async afterRun(threadId: string, run: RemoteRun, user: RunUser | undefined, signal: AbortSignal): Promise<void> {
    const { logger } = this.#o;
    try {
      const { files, unreadable } = presentedIn(run.last, { messageIds: run.before, artifacts: run.artifactsBefore });
      if (unreadable.length > 0) logger.warn({ threadId, count: unreadable.length }, "artifacts of a shape Antler cannot read");
      if (files.length === 0) return;
      if (!this.#o.files) {
        logger.info({ threadId, count: files.length }, "the run presented files; this harness has no file outbox for them");
        return;
      }
      await this.collect(threadId, files, this.#o.files, user, signal);
    } catch (err) {
      logger.warn({ threadId, err: errorMessage(err) }, "could not collect the files the run presented");
    }
  }

  /** Brings each file into the thread's folder and outbox, in order; stops quietly once `signal` aborts. */
  async collect(
    threadId: string,
    presented: Presented[],
    to: AgentFiles,
    user: RunUser | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const got = await Promise.all(presented.map((file) => this.#bytes(threadId, file, to.maxBytes, user, signal)));
    if (signal.aborted) return;
    const { files, outbox } = to;
    for (const [i, data] of got.entries()) {
      const file = presented[i]!;
      if (typeof data === "string") {
        outbox.notice(threadId, data);
        continue;
      }
      try {
        outbox.add(threadId, await files.save(threadId, file.name, data));
      } catch (err) {
        this.#o.logger.warn({ threadId, file: file.name, err: errorMessage(err) }, "could not store a file the agent presented");
        outbox.notice(threadId, `I couldn't keep “${file.name}”, so it was not sent.`);
      }
    }
  }

  /** The file's bytes, or the notice that says why not. */
  async #bytes(
    threadId: string,
    file: Presented,
    maxBytes: number,
    user: RunUser | undefined,
    signal: AbortSignal,
  ): Promise<Uint8Array | string> {
    const tooLarge = `“${file.name}” is larger than the ${sizeText(maxBytes)} limit, so it was not sent.`;
    if (file.kind === "data") {
      if (Math.floor((file.base64.length * 3) / 4) > maxBytes + 2) return tooLarge;
      const data = new Uint8Array(Buffer.from(file.base64, "base64"));
      return data.byteLength > maxBytes ? tooLarge : data;
    }
    const url = file.kind === "url" ? file.url : this.urlOf(threadId, file.path);
    const ms = this.#o.settings.timeout_ms;
    const log = { threadId, file: file.name, url: url ? shown(url) : undefined };
    try {
      if (!url || !/^https?:$/.test(new URL(url).protocol)) throw new Error("not an http(s) address");
      const limit = AbortSignal.any([signal, AbortSignal.timeout(ms)]);
      return await this.#download(url, this.#headers(threadId, user), maxBytes, limit);
    } catch (err) {
      if (signal.aborted) return "";
      if (err instanceof TooLarge) return tooLarge;
      const timedOut = (err as { name?: string }).name === "TimeoutError";
      this.#o.logger.warn(
        { ...log, err: errorMessage(err), timeoutMs: timedOut ? ms : undefined },
        "could not fetch a file the agent presented",
      );
      const s = Math.round(ms / 100) / 10;
      const within = timedOut ? ` within ${s} second${s === 1 ? "" : "s"}` : "";
      return `I couldn't get “${file.name}” from the agent${within}, so it was not sent.`;
    }
  }

  /** Headers for the server's own origins: the remote's key and headers, and the artifact headers with their values filled. */
  #headers(threadId: string, user: RunUser | undefined): Record<string, string> {
    const { api_key, headers, artifacts } = this.#o.settings;
    const vars: Record<string, string> = { user_id: identityOf(user).user_id ?? "", thread_id: threadId };
    const filled = Object.entries(artifacts.headers)
      .map(([name, value]) => [name, value.replace(/\{(user_id|thread_id)\}/g, (_, key: string) => vars[key] ?? "")])
      .filter(([, value]) => value !== "");
    return { ...headers, ...(api_key ? { "x-api-key": api_key } : {}), ...Object.fromEntries(filled) };
  }

  /** GET within the size limit; credentials go only to trusted origins, redirects included. */
  async #download(
    start: string,
    credentials: Record<string, string>,
    maxBytes: number,
    signal: AbortSignal,
  ): Promise<Uint8Array> {
    let url = start;
    for (let hop = 0; ; hop++) {
      const trusted = this.#trusted.has(originOf(url) ?? "");
      const res = await fetch(url, { headers: trusted ? credentials : {}, redirect: "manual", signal });
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location && hop < MAX_REDIRECTS) {
        await res.body?.cancel();
        url = new URL(location, url).toString();
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`HTTP ${res.status}`);
      }
      return readLimited(res, maxBytes);
    }
  }
}

/** The body, refused as soon as it passes `max` bytes. */
async function readLimited(res: Response, max: number): Promise<Uint8Array> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (declared > max) {
    await res.body?.cancel();
    throw new TooLarge();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new TooLarge();
    }
    chunks.push(value);
  }
  return new Uint8Array(Buffer.concat(chunks));
}
