/** What the web chat's routes read and write: the page's message shape and the checks of a request. */
import type { IncomingMessage } from "node:http";
import { HttpError, isJsonObject, readJson } from "../../server/http.js";
import { formatDuration, progressShows, rowEnded, rowIcon, rowLabel } from "../kit/progress.js";
import type { ButtonSpec, ConversationRef, InboundMessage, OutboundContent, ProgressContent, ProgressRow } from "../types.js";
import { toHtml } from "./format.js";

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** One request the routes work on: who sent it, and for which conversation. */
export interface Caller {
  client: string;
  conversation: string;
  ref: ConversationRef;
}

/** What a page posted (a message or a click), as the core takes it. */
export function webInbound(channel: string, caller: Caller, id: string, text: string): InboundMessage {
  return {
    channel,
    eventId: `${caller.client}:${caller.conversation}:${id}`,
    ref: caller.ref,
    user: { id: caller.client, name: "you" },
    text,
    mentioned: true,
    sentAt: Date.now(),
  };
}

/** A message as the page shows it. */
export interface PageMessage {
  id: string;
  text: string;
  html: string;
  buttons: ButtonSpec[];
  questionId?: string;
  /** When it was sent, ms since epoch. */
  at: number;
  /** What the agent is doing, shown as a panel under the message; absent when there is none. */
  progress?: PageProgress;
}

/**
 * The progress view as the page gets it: the core's view with each row's mark (`icon`), its name
 * as every platform writes it (`title`: `subagent: …`, `waiting for approval: …`) and an ended
 * row's duration (`took`) already written (../kit/progress.ts), so the page formats nothing. The
 * page builds its panel with `textContent` only, so none of it is HTML.
 */
export interface PageProgress {
  mode: ProgressContent["mode"];
  headline: string;
  summary?: string;
  reasoning?: string;
  rows: Array<Pick<ProgressRow, "id" | "kind" | "title" | "detail" | "state"> & { icon: string; took?: string }>;
}

/** The view for the page, or null when nothing of it is left to show (the panel goes). */
export function pageProgress(view: ProgressContent | undefined): PageProgress | null {
  if (!progressShows(view)) return null;
  const rows = view.rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    icon: rowIcon(row),
    title: rowLabel(row),
    state: row.state,
    ...(row.detail ? { detail: row.detail } : {}),
    ...(row.durationMs !== undefined && rowEnded(row) ? { took: formatDuration(row.durationMs) } : {}),
  }));
  const out: PageProgress = { mode: view.mode, headline: view.headline, rows };
  if (view.summary) out.summary = view.summary;
  if (view.reasoning) out.reasoning = view.reasoning;
  return out;
}

export function pageMessage(id: string, content: OutboundContent): PageMessage {
  const progress = pageProgress(content.progress);
  return {
    id,
    text: content.text,
    html: toHtml(content.text),
    buttons: content.buttons ?? [],
    at: Date.now(),
    ...(content.questionId ? { questionId: content.questionId } : {}),
    ...(progress ? { progress } : {}),
  };
}

export async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!(req.headers["content-type"] ?? "").toLowerCase().startsWith("application/json")) {
    throw new HttpError(415, "send JSON, with content-type: application/json");
  }
  const body = await readJson(req);
  if (!isJsonObject(body)) throw new HttpError(400, "the body must be a JSON object");
  return body;
}

export function messageId(value: unknown): string {
  if (typeof value !== "string" || !ID.test(value)) throw new HttpError(400, "id must be 1 to 64 letters, digits, '-' or '_'");
  return value;
}

export function sequence(value: string | string[] | null | undefined): number | undefined {
  if (typeof value !== "string" || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}
