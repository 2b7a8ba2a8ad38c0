/**
 * A Bolt `Receiver` for the Events API mounted on Antler's one HTTP server (no second port).
 * It checks Slack's signature with Bolt's own `verifySlackRequest`, answers `url_verification`,
 * and answers Slack only after Bolt's listeners (and so the core's durable sink) have finished —
 * within Slack's 3 s window, or with 503 so that Slack retries rather than loses the event.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type App, type Receiver, type ReceiverEvent, verifySlackRequest } from "@slack/bolt";
import type { Logger } from "../../log/logger.js";
import { HttpError, isJsonObject, readBody, sendJson } from "../../server/http.js";
import { mountWebhook } from "../kit/webhook-route.js";
import type { HttpMount } from "../types.js";
import { envelopeProblem } from "./webhook-check.js";

export interface SlackHttpReceiverOptions {
  signingSecret: string;
  http: HttpMount;
  /** The channel's name: its route is `/webhooks/<name>`. */
  channel: string;
  /** Older paths mounted beside it. */
  aliases: string[];
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
    const { http, channel, aliases } = this.options;
    mountWebhook(http, channel, (req, res) => this.handle(req, res), aliases);
  }

  async stop(): Promise<void> {
    this.options.http.unroute();
  }

  /** Refusals are thrown as HttpError: the server answers them and logs them rate-limited. */
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The shared reader answers 413 over server.max_body_bytes, before the signature is checked.
    const raw = (await readBody(req)).toString("utf8");
    const problem = this.signatureProblem(req, raw);
    if (problem) throw new HttpError(401, `invalid signature: ${problem}`, { error: "invalid signature" });
    const body = parseBody(req, raw);
    if (!body)
      throw new HttpError(400, "body is not a JSON object (application/json) or a form with a JSON payload", {
        error: "unreadable body",
      });
    const shape = envelopeProblem(body);
    if (shape) throw new HttpError(400, `not a Slack event: ${shape}`);
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

  /** Why the request's signature is not acceptable, or undefined when it is. */
  private signatureProblem(req: IncomingMessage, raw: string): string | undefined {
    const signature = header(req, "x-slack-signature");
    const timestamp = Number(header(req, "x-slack-request-timestamp"));
    if (!signature || !Number.isFinite(timestamp)) return "missing X-Slack-Signature or X-Slack-Request-Timestamp";
    try {
      verifySlackRequest({
        signingSecret: this.options.signingSecret,
        body: raw,
        headers: { "x-slack-signature": signature, "x-slack-request-timestamp": timestamp },
      });
      return undefined;
    } catch (err) {
      return (err as Error).message;
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
      if (!payload) return Object.fromEntries(form);
      const parsed = JSON.parse(payload) as unknown;
      return isJsonObject(parsed) ? parsed : undefined;
    }
    // Slack posts events as JSON and interactions as forms; any other content type is not Slack.
    if (!type.startsWith("application/json")) return undefined;
    const parsed = JSON.parse(raw) as unknown;
    return isJsonObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
