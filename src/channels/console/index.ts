/**
 * The console channel: a conversation in the terminal, through the same dispatcher and renderer
 * as every platform. Lines typed on stdin are messages; replies stream onto stdout. Questions
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
  OutboundContent,
} from "../types.js";

export const ConsoleChannelConfig = z.strictObject({
  /** Text before each of the bot's messages. */
  prefix: z.string().default("antler› "),
});
export type ConsoleChannelConfig = z.output<typeof ConsoleChannelConfig>;

/** Streams a console channel reads and writes; stdin/stdout unless a test passes others. */
export interface ConsoleIO {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

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
    markdown: "plain",
    typingIntervalMs: 60_000,
  };
  /** Resolves when the input ends (Ctrl-D or the end of piped input). */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  private readonly io: ConsoleIO;
  private readonly prefix: string;
  private readline: Interface | undefined;
  private seq = 0;
  private readonly startedAt = Date.now();
  /** The message at the bottom of the terminal and the text shown for it: only it can grow in place. */
  private last: { id: string; shown: string } | undefined;
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

  async start(sink: InboundSink): Promise<void> {
    const rl = createInterface({ input: this.io.input, terminal: false });
    this.readline = rl;
    this.state = "running";
    const user = safeUser();
    // Lines are handed over one at a time, in order; the dispatcher queues them per conversation.
    let chain = Promise.resolve();
    rl.on("line", (line) => {
      const text = line.trim();
      if (!text) return;
      this.last = undefined;
      chain = chain.then(() => sink(this.message(user, text))).catch((err: unknown) => this.notTaken(err));
    });
    rl.on("close", () => {
      void chain.then(() => this.resolveClosed());
    });
    rl.on("line", () => {
      // The user's line ends the bot's current line on the terminal.
      if (this.last) this.io.output.write("\n");
    });
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
    this.write(`${this.last ? "\n" : ""}${this.prefix}(not sent: ${errorMessage(err)})\n`);
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
    this.write(`${this.last ? "\n" : ""}${this.prefix}${content.text}`);
    this.last = { id, shown: content.text };
    return { id, ref: this.ref };
  }

  async edit(handle: MessageHandle, content: OutboundContent): Promise<void> {
    const last = this.last;
    if (last && last.id === handle.id && content.text.startsWith(last.shown)) {
      this.write(content.text.slice(last.shown.length));
      last.shown = content.text;
      return;
    }
    // Older messages cannot change in place on a terminal: show the new version below.
    this.write(`\n${this.prefix}${content.text}`);
    this.last = { id: handle.id, shown: content.text };
  }

  async typing(): Promise<void> {}

  private write(text: string): void {
    this.io.output.write(text);
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "local";
  }
}
