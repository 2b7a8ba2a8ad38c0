/**
 * What the chat commands do (commands.ts reads them): `/help` and `/status` answer; `/stop`
 * stops the conversation's reply here, on the replica that runs it, or the tool calls waiting
 * for approval; `/schedules` lists or cancels the conversation's schedules; `/new` starts a fresh
 * thread and `/agent` lists or switches agents; `/memory` shows or forgets what the agent remembers
 * about the asker (memory-command.ts).
 */
import type { InboundMessage } from "../channels/types.js";
import { DEFAULT_AGENT } from "../config/agents.js";
import { ScheduleBook } from "../schedules/book.js";
import { formatCancel, formatScheduleList } from "../schedules/format.js";
import { DEFAULT_SCHEDULE_LIMITS } from "../schedules/from-config.js";
import type { ApprovalDesk } from "./approval-desk.js";
import { type CommandName, commandArgument, helpText } from "./commands.js";
import type { CoreContext } from "./context.js";
import { queueCommand } from "./followups/command.js";
import { chatMemory, memoryCommand } from "./memory-command.js";
import { NOTICES } from "./notices.js";
import type { ChannelScope } from "./scope.js";

export class ChatCommands {
  constructor(
    private readonly core: CoreContext,
    private readonly desk: ApprovalDesk,
  ) {}

  /** A command that answers at once (`/help`, `/status`, `/stop`), even while a reply runs. */
  async immediate(scope: ChannelScope, msg: InboundMessage, command: CommandName): Promise<void> {
    const key = msg.ref.key;
    if (command === "help")
      return void (await scope.notify(msg.ref, helpText(scope.channel.capabilities, await this.available(scope, msg))));
    if (command === "memory") return scope.post(msg.ref, await memoryCommand(this.core, scope, msg));
    if (command === "stop") return this.stop(scope, msg);
    if (command === "schedules") return this.schedules(scope, msg);
    if (command === "queue") return void (await scope.notify(msg.ref, await queueCommand(this.core, scope, msg)));
    await scope.notify(msg.ref, await this.statusText(scope, key));
  }

  /** Which optional commands `/help` lists here: `/memory` where this chat's agent remembers people. */
  private async available(scope: ChannelScope, msg: InboundMessage): Promise<{ memory: boolean }> {
    const memory = await chatMemory(this.core, scope, msg).catch(() => undefined);
    return { memory: memory !== undefined };
  }

  /** `/new`: a fresh thread with the agent this chat uses now. */
  async startNewThread(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    const agent = await this.core.conversations.agentFor(scope, msg);
    await this.core.conversations.bindNewThread(scope, msg.ref.key, agent);
    await scope.notify(msg.ref, NOTICES.newThread);
  }

  /** `/agent` and `/agent NAME`. */
  async agent(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    await scope.notify(msg.ref, await this.core.conversations.agentCommand(scope, msg));
  }

  /** `/schedules` lists the conversation's schedules; `/schedules cancel N` (a number or an id) cancels one. */
  private async schedules(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    const book = new ScheduleBook({ store: scope.store, limits: this.core.options.scheduleLimits ?? DEFAULT_SCHEDULE_LIMITS });
    const [verb, which] = commandArgument(msg.text).split(/\s+/, 2);
    const key = msg.ref.key;
    if (!verb) return scope.post(msg.ref, formatScheduleList(await book.list(key)));
    if (verb.toLowerCase() !== "cancel" || !which) {
      return scope.notify(
        msg.ref,
        "Use /schedules to list this conversation's schedules, and /schedules cancel N to cancel one.",
      );
    }
    const index = /^\d+$/.test(which) ? Number(which) : which;
    await scope.post(msg.ref, formatCancel(await book.cancel(key, index, msg.user)));
  }

  private async stop(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    const key = msg.ref.key;
    // A message sent after /stop must not join the reply being stopped: it gets a turn of its own.
    this.core.board.close(key);
    const run = this.core.active.of(key);
    // The stopped run posts its own "stopped" notice; say something only when there was nothing to stop.
    if (run) return run.abort();
    const replicas = this.core.options.replicas;
    // Another replica is answering in this conversation: it stops and says so.
    if (replicas && (await replicas.heldElsewhere(scope.tenant, key))) return replicas.stopElsewhere(scope.tenant, key);
    if (!(await this.desk.stop(scope, key, msg.user.name ?? msg.user.id))) await scope.notify(msg.ref, NOTICES.nothingToStop);
  }

  private async statusText(scope: ChannelScope, key: string): Promise<string> {
    const { conversations } = this.core;
    const binding = await scope.store.currentBinding(key);
    if (!binding) return "No conversation yet: send a message to start one.";
    const { threadId } = binding;
    const agent = binding.agent ?? DEFAULT_AGENT;
    if (!conversations.serves(scope, agent)) {
      return [`Thread: ${threadId}`, `Agent: ${agent} (no longer configured: your next message starts a new thread)`].join("\n");
    }
    const info = await (await conversations.harness(scope, agent)).getThread(threadId);
    const pending = await scope.store.getPending(threadId);
    const lines = [
      `Thread: ${threadId}`,
      `Agent: ${agent}`,
      `Title: ${info?.title ?? "(none yet)"}`,
      `Model: ${info?.model ?? "(unknown)"}`,
      `Replying now: ${this.core.active.has(key) ? "yes" : "no"}`,
      `Messages: ${info?.messageCount ?? 0}`,
    ];
    if (pending) lines.push(`Waiting for your answer to: ${pending.question}`);
    return lines.join("\n");
  }
}
