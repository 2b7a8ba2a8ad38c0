/**
 * One page of the web chat showing one conversation, as the page's script drives it: it loads the
 * history, opens the event stream with `?after=<seq>`, and applies each event to what the user
 * sees. When the stream ends it connects again to the same URL with `Last-Event-ID`, as
 * `EventSource` does; unlike `EventSource` it also tries again after a 404 or 5xx (a page that
 * re-opens its stream), and gives up only on 400, 401 and 403. It keeps every version of every
 * bot message (Markdown, HTML, the text a person reads from that HTML, the progress panel under
 * it), buttons, files (fetched
 * at once, as a person clicking the link would), typing, the `user` events from other tabs, resets,
 * and anything unsafe in the HTML.
 */
import { randomUUID } from "node:crypto";
import type { BotFile, VisibleMessage } from "../../contract/driver.js";
import type { HistoryBody, WebBrowser, WireButton, WireMessage } from "./client.js";
import { htmlProblems, htmlText } from "./html.js";
import { panelLines, progressProblems, type WireProgress } from "./progress.js";
import { readSse, type SseCursor, type SseEvent } from "./sse.js";

/** A bot message as the page shows it. */
export interface ShownMessage {
  id: string;
  /** The Markdown the agent wrote (the wire's `text`). */
  markdown: string;
  html: string;
  /** What a person reads: the HTML's text. */
  text: string;
  buttons: WireButton[];
  questionId?: string;
  /** The progress panel under it now (null: none), and what it reads as. */
  progress: WireProgress | null;
  panel: string[];
  versions: Array<{ text: string; markdown: string; html: string; panel: string[]; at: number }>;
  /** Arrived on the stream, or came with the history as its open question. */
  source: "event" | "history";
}

/** A `file` event, and the download the page's link gives. */
export interface ShownFile {
  id: string;
  name: string;
  mime: string;
  kind: string;
  size: number;
  url: string;
  at: number;
  /** The download's status and bytes, once fetched. */
  status?: number;
  contentType?: string | null;
  data?: Uint8Array;
}

/** Every event as it arrived, data parsed. */
export interface ReceivedEvent {
  event: string;
  id: string;
  data: unknown;
  at: number;
}

export interface OpenOptions {
  /** Load the history first and start the stream after its `seq` (default true, as the page does). */
  history?: boolean;
  /** Open with `?after=<n>` (without the history). */
  after?: number | string;
  /** Open with this `Last-Event-ID` header. */
  lastEventId?: string;
}

const GIVE_UP = new Set([400, 401, 403]);

export class ChatTab {
  readonly events: ReceivedEvent[] = [];
  readonly messages: ShownMessage[] = [];
  readonly files: ShownFile[] = [];
  readonly typing: Array<{ ms: number; at: number }> = [];
  readonly userMessages: Array<{ id: string; text: string; at: number }> = [];
  /** Unsafe HTML and unreadable events; a test expects none. */
  readonly problems: string[] = [];
  /** Stream requests that failed, oldest first. */
  readonly streamErrors: Array<{ status?: number; error?: string; at: number }> = [];
  history: HistoryBody | undefined;
  resets = 0;
  comments = 0;
  /** Successful stream connections so far. */
  connections = 0;
  connected = false;
  /** Why the stream stopped for good (a 400/401/403), if it did. */
  stopped: string | undefined;
  private readonly cursor: SseCursor = { lastId: "" };
  private retryMs = 100;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  private pending: Promise<unknown>[] = [];

  constructor(
    readonly browser: WebBrowser,
    readonly conv: string,
  ) {}

  get lastEventId(): string {
    return this.cursor.lastId;
  }

  private route(tail: string): string {
    return `/api/conversations/${encodeURIComponent(this.conv)}/${tail}`;
  }

  /** Loads the page: the history (unless told otherwise), then the stream; resolves once it is connected. */
  async open(options: OpenOptions = {}): Promise<this> {
    await this.browser.ensureSession();
    let after = options.after;
    if (options.history !== false && after === undefined && options.lastEventId === undefined) {
      after = (await this.loadHistory()).seq;
    }
    if (options.lastEventId !== undefined) this.cursor.lastId = options.lastEventId;
    const query = after !== undefined ? `?after=${encodeURIComponent(String(after))}` : "";
    let first: (error?: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      first = (error) => (error ? reject(error) : resolve());
    });
    this.loop = this.run(this.route(`events${query}`), (error) => {
      first(error);
      first = () => {};
    });
    await ready;
    return this;
  }

  /** Fetches the history (as after a reload or a `reset`) and shows its open question. */
  async loadHistory(): Promise<HistoryBody> {
    const response = await this.browser.request("GET", this.route("history"));
    if (response.status !== 200) throw new Error(`GET history answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as HistoryBody;
    this.history = body;
    for (const m of body.messages) this.check(m.id, m.html);
    for (const waiting of body.waiting) this.show(waiting, "history");
    return body;
  }

  /** The user types `text` and sends it, with the uploads `files` attached; resolves with the server's answer. */
  say(text: string, id: string = randomUUID(), files?: unknown[]): Promise<Response> {
    return this.browser.request("POST", this.route("messages"), { json: files ? { id, text, files } : { id, text } });
  }

  /** Uploads one file as the page does (`<conv>/uploads`); resolves with the server's answer ({id} on 201). */
  upload(name: string, mime: string, data: Uint8Array): Promise<Response> {
    return this.browser.request("POST", this.route("uploads"), {
      body: data,
      contentType: mime,
      headers: { "x-file-name": encodeURIComponent(name) },
    });
  }

  /** The user clicks the button labelled `label` on the newest message showing it. */
  async click(label: string): Promise<Response> {
    const message = this.messages.findLast((m) => m.buttons.some((b) => b.label === label));
    if (!message) throw new Error(`no message in ${this.conv} shows a button "${label}"`);
    return this.clickOn(message, label);
  }

  clickOn(message: ShownMessage, label: string): Promise<Response> {
    const button = message.buttons.find((b) => b.label === label);
    if (!button) throw new Error(`message ${message.id} shows no button "${label}"`);
    const action = { id: randomUUID(), messageId: message.id, questionId: message.questionId, buttonId: button.id };
    return this.browser.request("POST", this.route("actions"), { json: action });
  }

  /** The bot's messages in the contract's shape. */
  visible(): VisibleMessage[] {
    return this.messages.map((m) => ({
      id: m.id,
      text: m.text,
      buttons: m.buttons.map((b) => b.label),
      versions: m.versions.map((v) => ({ text: v.text, at: v.at })),
    }));
  }

  /** Files downloaded in full, in the contract's shape. */
  botFiles(): BotFile[] {
    return this.files
      .filter((f) => f.status === 200 && f.data)
      .map((f) => ({ name: f.name, data: f.data as Uint8Array, kind: f.kind === "image" ? "image" : "file" }));
  }

  /** Closes the page: the stream ends and no reconnection follows. */
  async close(): Promise<void> {
    this.abort.abort();
    await this.loop;
    await Promise.allSettled(this.pending);
    this.connected = false;
  }

  /** Connects, reads, and connects again until closed; a first attempt that fails ends it (`open` throws). */
  private async run(path: string, settled: (error?: Error) => void): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const failure = await this.connect(path, signal, settled);
      if (failure && (this.connections === 0 || GIVE_UP.has(failure.status ?? 0))) {
        this.stopped = failure.message;
        settled(new Error(failure.message));
        return;
      }
      this.connected = false;
      await delay(this.retryMs, signal);
    }
    settled(new Error("the tab was closed"));
  }

  /** One connection, read to its end; resolves with what went wrong, if anything did. */
  private async connect(
    path: string,
    signal: AbortSignal,
    settled: (error?: Error) => void,
  ): Promise<{ status?: number; message: string } | undefined> {
    try {
      const headers: Record<string, string> = { accept: "text/event-stream", "cache-control": "no-cache" };
      if (this.cursor.lastId) headers["last-event-id"] = this.cursor.lastId;
      const response = await this.browser.request("GET", path, { headers, signal });
      const type = response.headers.get("content-type") ?? "";
      if (response.status !== 200 || !type.startsWith("text/event-stream") || !response.body) {
        const text = await response.text().catch(() => "");
        this.streamErrors.push({ status: response.status, error: `${type}: ${text}`, at: Date.now() });
        return { status: response.status, message: `GET ${path} answered ${response.status} (${type}): ${text}` };
      }
      this.connected = true;
      this.connections++;
      settled();
      await readSse(response.body, this.handlers(), this.cursor);
      return undefined;
    } catch (err) {
      if (signal.aborted) return undefined;
      this.streamErrors.push({ error: String(err), at: Date.now() });
      return { message: `GET ${path} failed: ${String(err)}` };
    }
  }

  private handlers() {
    return {
      event: (event: SseEvent) => this.apply(event),
      comment: () => {
        this.comments++;
      },
      // Honoured, but kept short so tests do not wait for a browser's seconds.
      retry: (ms: number) => {
        this.retryMs = Math.min(ms, 500);
      },
    };
  }

  private apply(event: SseEvent): void {
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      this.problems.push(`event ${event.event} #${event.id}: data is not JSON: ${event.data}`);
      return;
    }
    const at = Date.now();
    this.events.push({ event: event.event, id: event.id, data, at });
    const body = data as Record<string, unknown>;
    switch (event.event) {
      case "message":
        this.show(data as WireMessage, "event");
        break;
      case "edit":
        this.edit(data as Partial<WireMessage> & { id: string });
        break;
      case "typing":
        this.typing.push({ ms: Number(body.ms), at });
        break;
      case "file":
        this.offer(data as ShownFile, at);
        break;
      case "user":
        this.userMessages.push({ id: String(body.id), text: String(body.text), at });
        break;
      case "reset":
        this.resets++;
        this.track(this.loadHistory());
        break;
    }
  }

  /** A new message, or one the page shows already (the history's question, a replayed event). */
  private show(message: WireMessage, source: ShownMessage["source"]): void {
    const known = this.messages.find((m) => m.id === message.id);
    if (known) {
      this.change(known, message);
      return;
    }
    this.check(message.id, message.html, message.progress);
    const at = Date.now();
    const text = htmlText(message.html ?? "");
    const progress = message.progress ?? null;
    const panel = panelLines(progress);
    this.messages.push({
      id: message.id,
      markdown: message.text,
      html: message.html,
      text,
      buttons: message.buttons ?? [],
      ...(message.questionId ? { questionId: message.questionId } : {}),
      progress,
      panel,
      versions: [{ text, markdown: message.text, html: message.html, panel, at }],
      source,
    });
  }

  /** An edit; one naming a message the page does not show is shown as a new one (README). */
  private edit(edit: Partial<WireMessage> & { id: string }): void {
    const known = this.messages.find((m) => m.id === edit.id);
    if (!known) {
      this.show({ text: "", html: "", buttons: [], ...edit }, "event");
      return;
    }
    this.change(known, edit);
  }

  private change(message: ShownMessage, update: Partial<WireMessage>): void {
    const markdown = update.text ?? message.markdown;
    const html = update.html ?? message.html;
    const buttons = update.buttons ?? message.buttons;
    // Each message and edit says what the panel shows: absent or null takes it away, as on the page.
    const progress = update.progress ?? null;
    const panel = panelLines(progress);
    if (update.questionId) message.questionId = update.questionId;
    const same =
      markdown === message.markdown &&
      html === message.html &&
      panel.join("\n") === message.panel.join("\n") &&
      buttons.length === message.buttons.length &&
      buttons.every((b, i) => b.id === message.buttons[i]?.id && b.label === message.buttons[i]?.label);
    message.progress = progress;
    if (same) return;
    this.check(message.id, html, progress);
    message.markdown = markdown;
    message.html = html;
    message.text = htmlText(html);
    message.buttons = buttons;
    message.panel = panel;
    message.versions.push({ text: message.text, markdown, html, panel, at: Date.now() });
  }

  /** A file offered for download; fetched at once with this browser's cookies. */
  private offer(file: ShownFile, at: number): void {
    const shown: ShownFile = { ...file, at };
    this.files.push(shown);
    const download = async () => {
      const response = await this.browser.request("GET", file.url);
      shown.contentType = response.headers.get("content-type");
      const data = new Uint8Array(await response.arrayBuffer());
      shown.status = response.status;
      if (response.status === 200) shown.data = data;
    };
    this.track(download());
  }

  private check(id: string, html: string, progress?: unknown): void {
    for (const problem of htmlProblems(html ?? "")) this.problems.push(`message ${id}: ${problem}`);
    for (const problem of progressProblems(progress)) this.problems.push(`message ${id}: ${problem}`);
  }

  private track(work: Promise<unknown>): void {
    this.pending.push(
      work.catch((err: unknown) => {
        this.problems.push(String(err));
      }),
    );
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
