/**
 * A Bolt `Receiver` for the Events API mounted on Antler's one HTTP server (no second port).
 * It checks Slack's signature with Bolt's own `verifySlackRequest`, answers `url_verification`,
 * and answers Slack only after Bolt's listeners (and so the core's durable sink) have finished —
 * within Slack's 3 s window, or with 503 so that Slack retries rather than loses the event.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type App, type Receiver, type ReceiverEvent, verifySlackRequest } from "@slack/bolt";
import type { Logger } from "../../log/logger.js";
import { readBody, sendJson } from "../../server/http.js";
import type { HttpMount } from "../types.js";

export interface SlackHttpReceiverOptions {
  signingSecret: string;
  http: HttpMount;
  path: string;
  logger: Logger;
  /** Longest wait for the listeners before answering 503; under Slack's 3 s. */
  ackTimeoutMs?: number;
}

/** Events API receiver; `start()` mounts the route, `stop()` takes it down. */
export class SlackHttpReceiver implements Receiver {
  private app: App | undefined;
  private readonly ackTimeoutMs: number;

  constructor(private readonly options: SlackHttpReceiverOptions) {
    this.ackTimeoutMs = options.ackTimeoutMs ?? 2500;
  }

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.options.http.route("POST", this.options.path, (req, res) => this.handle(req, res));
  }

  async stop(): Promise<void> {
    this.options.http.unroute(this.options.path);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = (await readBody(req)).toString("utf8");
    if (!this.verified(req, raw)) {
      sendJson(res, 401, { error: "invalid signature" });
      return;
    }
    const body = parseBody(req, raw);
    if (!body) {
      sendJson(res, 400, { error: "unreadable body" });
      return;
    }
    if (body.type === "url_verification") {
      sendJson(res, 200, { challenge: body.challenge });
      return;
    }
    if (body.type === "ssl_check") {
      res.writeHead(200).end();
      return;
    }
    await this.dispatch(req, res, body);
  }

  private verified(req: IncomingMessage, raw: string): boolean {
    const signature = header(req, "x-slack-signature");
    const timestamp = Number(header(req, "x-slack-request-timestamp"));
    if (!signature || !Number.isFinite(timestamp)) return false;
    try {
      verifySlackRequest({
        signingSecret: this.options.signingSecret,
        body: raw,
        headers: { "x-slack-signature": signature, "x-slack-request-timestamp": timestamp },
      });
      return true;
    } catch (err) {
      this.options.logger.warn({ reason: (err as Error).message }, "slack request rejected");
      return false;
    }
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    let reply: unknown;
    const retryNum = Number(header(req, "x-slack-retry-num"));
    const retryReason = header(req, "x-slack-retry-reason");
    const event: ReceiverEvent = {
      body,
      // Bolt acks events before running listeners; the HTTP answer waits for the listeners anyway.
      ack: async (response?: unknown) => {
        reply = response;
      },
      ...(Number.isFinite(retryNum) ? { retryNum } : {}),
      ...(retryReason ? { retryReason } : {}),
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.ackTimeoutMs);
    });
    try {
      const outcome = await Promise.race([this.process(event), timeout]);
      if (outcome === "timeout") {
        this.options.logger.warn("slack event still being recorded after the ack window; answering 503 so Slack retries");
        sendJson(res, 503, { error: "busy" });
      } else if (reply === undefined || reply === "") res.writeHead(200).end();
      else if (typeof reply === "string") res.writeHead(200, { "content-type": "text/plain" }).end(reply);
      else sendJson(res, 200, reply);
    } catch (err) {
      this.options.logger.error({ err }, "slack event failed; Slack will retry it");
      sendJson(res, 500, { error: "event failed" });
    } finally {
      clearTimeout(timer);
    }
  }

  private async process(event: ReceiverEvent): Promise<"done"> {
    if (!this.app) throw new Error("receiver not initialised by a Bolt App");
    await this.app.processEvent(event);
    return "done";
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** JSON events, or an interactivity form `payload=<json>`. */
function parseBody(req: IncomingMessage, raw: string): Record<string, unknown> | undefined {
  try {
    const type = header(req, "content-type") ?? "";
    if (type.startsWith("application/x-www-form-urlencoded")) {
      const form = new URLSearchParams(raw);
      const payload = form.get("payload");
      return payload ? (JSON.parse(payload) as Record<string, unknown>) : Object.fromEntries(form);
    }
    const parsed = JSON.parse(raw) as unknown;
    return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
