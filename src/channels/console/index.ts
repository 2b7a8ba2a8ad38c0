/**
 * The console channel: a conversation in the terminal, through the same dispatcher and renderer
 * as every platform. Lines typed on stdin are messages; replies stream onto stdout as plain text
 * (format.ts converts the agent's Markdown, stream.ts prints a reply as it grows). Questions
 * show as numbered options (a terminal has no buttons) and are answered by typing the number.
 */
import { userInfo } from "node:os";
import { createInterface, type Interface } from "node:readline";
import { z } from "zod";
import { errorMessage } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import type {
  Channel,
  ChannelCapabilities,
  ChannelContext,
  ChannelStatus,
  ConversationRef,
  InboundMessage,
  InboundSink,
  MessageHandle,
  NativeStream,
  NativeStreamLimits,
  OutboundContent,
} from "../types.js";
import { terminalText } from "./format.js";
import { TerminalStream } from "./stream.js";

export const ConsoleChannelConfig = z.strictObject({
  /** Text before each of the bot's messages. */
  prefix: z.string().default("antler› "),
});
export type ConsoleChannelConfig = z.output<typeof ConsoleChannelConfig>;

/** Streams a console channel reads and writes; stdin/stdout unless a test passes others. */
export interface ConsoleIO {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream & { isTTY?: boolean };
  /**
   * Resolves once the core has finished with every line typed so far (`antler chat` passes the
   * dispatcher's). With it, and a terminal as output, the console shows a prompt whenever the
   * agent is done and waits for the next line.
   */
  idle?: () => Promise<void>;
}

/** Shown before the user's input once the agent has answered (on a terminal only). */
export const PROMPT = "you› ";

export class ConsoleChannel implements Channel {
  static configSchema = ConsoleChannelConfig;
  /** Streams used by instances created after this is set (tests); process stdio by default. */
  static io: ConsoleIO | undefined;

  readonly name: string;
  /** One terminal: with several replicas, only one of them reads it. */
  readonly exclusive = true;
  readonly capabilities: ChannelCapabilities = {
    maxTextLength: 100_000,
    minEditIntervalMs: 50,
    edits: true,
    buttons: false,
    threads: false,
    // The core hands over the Markdown as written; format.ts shows it as plain text.
    markdown: "plain",
    typingIntervalMs: 60_000,
  };
  /** A reply is one stream however long it takes: the terminal has no message size to respect. */
  readonly streamLimits: NativeStreamLimits = { maxTextLength: 100_000, maxDurationMs: 3_600_000 };
  /** Resolves when the input ends (Ctrl-D or the end of piped input). */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  private readonly io: ConsoleIO;
  private readonly prefix: string;
  private readline: Interface | undefined;
  private seq = 0;
  private readonly startedAt = Date.now();
  /** The bottom line of the terminal holds text that no newline ended yet. */
  private lineOpen = false;
  /** The message at the bottom of the terminal and the text shown for it: only it can grow in place. */
  private last: { id: string; shown: string } | undefined;
  /** Lines handed to the core whose answers are not finished yet. */
  private unanswered = 0;
  private state: ChannelStatus["state"] = "stopped";
  private readonly logger: Logger;

  constructor(ctx: ChannelContext<ConsoleChannelConfig>) {
    this.name = ctx.name;
    this.logger = ctx.logger;
    this.prefix = ctx.config.prefix;
    this.io = ConsoleChannel.io ?? { input: process.stdin, output: process.stdout };
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
  }

  private get ref(): ConversationRef {
    return { channel: this.name, key: `${this.name}:local:tty`, chatId: "tty", chatType: "direct" };
  }

  /** A prompt is shown only where a person types: a terminal, with the core's idle signal. */
  private get prompts(): boolean {
    return this.io.idle !== undefined && this.io.output.isTTY === true;
  }

  async start(sink: InboundSink): Promise<void> {
    const rl = createInterface({ input: this.io.input, terminal: false });
    this.readline = rl;
    this.state = "running";
    const user = safeUser();
    // Lines are handed over one at a time, in order; the dispatcher queues them per conversation.
    let chain = Promise.resolve();
    rl.on("line", (line) => {
      // The user's Enter ends the line on a terminal; piped input shows nothing, so end it here.
      if (this.lineOpen && !this.prompts) this.io.output.write("\n");
      this.lineOpen = false;
      this.last = undefined;
      const text = line.trim();
      if (!text) return this.promptIfDone();
      this.unanswered++;
      chain = chain
        .then(() => sink(this.message(user, text)))
        .catch((err: unknown) => this.notTaken(err))
        .then(() => this.answered());
    });
    rl.on("close", () => {
      void chain.then(() => this.resolveClosed());
    });
    this.promptIfDone();
  }

  /** One line's answer is done once the core is idle; the last one brings the prompt back. */
  private async answered(): Promise<void> {
    await this.io.idle?.().catch(() => undefined);
    this.unanswered--;
    this.promptIfDone();
  }

  private promptIfDone(): void {
    if (!this.prompts || this.unanswered > 0 || !this.readline) return;
    this.writeOut(PROMPT, true);
    this.last = undefined;
  }

  /** One typed line, from the local user, addressed to the bot. */
  private message(user: string, text: string): InboundMessage {
    return {
      channel: this.name,
      eventId: `${this.startedAt}-${++this.seq}`,
      ref: this.ref,
      user: { id: user, name: user },
      text,
      mentioned: true,
      sentAt: Date.now(),
    };
  }

  /** A terminal cannot redeliver: say the line was not taken, and keep reading the next ones. */
  private notTaken(err: unknown): void {
    this.logger.warn({ err }, "the core did not take a console line");
    this.writeOut(`${this.prefix}(not sent: ${errorMessage(err)})\n`, true);
    this.last = undefined;
  }

  async stop(): Promise<void> {
    this.readline?.close();
    this.readline = undefined;
    this.state = "stopped";
  }

  status(): ChannelStatus {
    return { state: this.state, connected: this.state === "running", mode: "tty", lastError: null };
  }

  async send(_ref: ConversationRef, content: OutboundContent): Promise<MessageHandle> {
    const id = `c${++this.seq}`;
    const shown = terminalText(content.text);
    this.writeOut(`${this.prefix}${shown}`, true);
    this.last = { id, shown };
    return { id, ref: this.ref };
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    const last = this.last;
    const shown = terminalText(content.text);
    if (last && last.id === handle.id && shown.startsWith(last.shown)) {
      this.writeOut(shown.slice(last.shown.length), false);
      last.shown = shown;
      return;
    }
    // Older messages cannot change in place on a terminal: show the new version below.
    this.writeOut(`${this.prefix}${shown}`, true);
    this.last = { id: handle.id, shown };
  }

  /** Replies stream block by block (stream.ts), and end with a newline. */
  async startStream(): Promise<NativeStream> {
    const handle = { id: `c${++this.seq}`, ref: this.ref };
    this.last = undefined;
    return new TerminalStream(handle, this.prefix, { write: (text, fresh) => this.writeOut(text, fresh) });
  }

  async typing(): Promise<void> {}

  /** Ends the bottom line if a message left it open (before the program exits). */
  endLine(): void {
    if (this.lineOpen) this.writeOut("\n", false);
  }

  /** Writes at the bottom of the terminal; `fresh` text starts on a line of its own. */
  private writeOut(text: string, fresh: boolean): void {
    if (text === "") return;
    this.io.output.write(fresh && this.lineOpen ? `\n${text}` : text);
    this.lineOpen = !text.endsWith("\n");
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "local";
  }
}
