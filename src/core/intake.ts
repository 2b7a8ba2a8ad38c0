/**
 * A message from its channel's sink to its conversation's queue: recorded in the inbox (a
 * duplicate stops here), then its verdict, decided the same way on every replica: not for the
 * bot (access rules, no mention), a command that answers at once, or a turn in the queue.
 */
import { accessDenial } from "../channels/kit/access.js";
import type { InboundMessage } from "../channels/types.js";
import { AntlerError, errorMessage } from "../errors.js";
import type { ChatCommands } from "./chat-commands.js";
import { type CommandName, IMMEDIATE, parseCommand } from "./commands.js";
import type { CoreContext } from "./context.js";
import type { Followups } from "./followups/index.js";
import type { Inbox } from "./inbox.js";
import type { Messages } from "./messages.js";
import { NOTICES } from "./notices.js";
import type { ChannelScope } from "./scope.js";

/** What to do with a message, decided the same way on every replica. */
type Verdict =
  | { kind: "ignore"; denial: "user" | "chat" | "mention" }
  | { kind: "immediate"; command: CommandName }
  | { kind: "queue" };

export class Intake {
  constructor(
    private readonly core: CoreContext,
    private readonly inbox: Inbox,
    private readonly messages: Messages,
    private readonly commands: ChatCommands,
    private readonly followups: Followups,
  ) {}

  /** Records `msg` and routes it; resolves once it is recorded and queued (or dropped as a duplicate). */
  async receive(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    if (msg.fromBot) return;
    if (!this.core.accepting) throw new AntlerError("shutting_down", "the gateway is shutting down; deliver this again later");
    const { logger } = this.core;
    if (!(await this.inbox.record(scope, msg))) {
      logger.debug({ channel: scope.name, eventId: msg.eventId }, "duplicate event dropped");
      return;
    }
    scope.events.inbound();
    scope.slot.lastInboundAt = Date.now();
    try {
      await this.route(scope, msg);
    } catch (err) {
      // Recorded means a redelivery would be dropped as a duplicate: answer it here instead.
      logger.error({ err, channel: scope.name, eventId: msg.eventId }, "could not route a recorded message");
      scope.noteError(err);
      await this.inbox.finish(scope, msg, "failed", errorMessage(err)).catch(() => undefined);
      await scope.notify(msg.ref, NOTICES.failed);
    }
  }

  /** Access, commands that answer at once, then the conversation's queue. */
  async route(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    const { core, inbox } = this;
    const verdict = await this.verdict(scope, msg);
    if (verdict.kind === "ignore") return this.ignore(scope, msg, verdict.denial);
    if (verdict.kind === "immediate") {
      core.inBackground(inbox.track(scope, msg, () => this.commands.immediate(scope, msg, verdict.command)));
      return;
    }
    const key = msg.ref.key;
    const job = core.options.replicas
      ? () => inbox.drain(scope, key, (s, m) => this.answerNow(s, m))
      : () => inbox.track(scope, msg, () => this.messages.handle(scope, msg));
    // A message while the conversation's turn runs may steer into it, join a bucket or interrupt it (followups/).
    const routed = await this.followups.route(scope, msg, () => core.queue.push(key, job));
    if (routed === "full") {
      if (!(await inbox.take(scope, msg))) return;
      await inbox.finish(scope, msg, "failed", "conversation queue full");
      core.inBackground(scope.notify(msg.ref, NOTICES.busy));
    }
  }

  /**
   * A message to answer now, in the caller's place in its conversation's queue: under its lease
   * with replicas (see `Inbox.drain`), or in the place recovery held for it (recovery-hold.ts).
   */
  async answerNow(scope: ChannelScope, msg: InboundMessage): Promise<void> {
    const verdict = await this.verdict(scope, msg);
    if (verdict.kind === "ignore") await this.ignore(scope, msg, verdict.denial);
    else if (verdict.kind === "immediate")
      await this.inbox.track(scope, msg, () => this.commands.immediate(scope, msg, verdict.command));
    else await this.inbox.track(scope, msg, () => this.messages.handle(scope, msg));
  }

  /** Whether the message is for the bot, and whether it answers at once or waits its turn. */
  private async verdict(scope: ChannelScope, msg: InboundMessage): Promise<Verdict> {
    // A turn nobody typed (an API call, a schedule) was allowed when it was accepted, and is no command.
    if (msg.origin) return { kind: "queue" };
    let denial = accessDenial(scope.access, msg);
    // A follow-up in a thread the bot is already part of needs no new mention, even after a restart.
    if (denial === "mention" && msg.inThread && (await scope.store.currentThread(msg.ref.key))) denial = undefined;
    if (denial) return { kind: "ignore", denial };
    const command = msg.action ? undefined : parseCommand(msg.text);
    if (command && IMMEDIATE.has(command)) return { kind: "immediate", command };
    return { kind: "queue" };
  }

  private async ignore(scope: ChannelScope, msg: InboundMessage, denial: "user" | "chat" | "mention"): Promise<void> {
    this.core.logger.debug({ channel: scope.name, key: msg.ref.key, denial }, "message not for the bot");
    if (!(await this.inbox.take(scope, msg))) return;
    await this.inbox.finish(scope, msg, "done", `ignored: ${denial}`);
    if (denial === "user" && msg.ref.chatType === "direct") this.core.inBackground(scope.notify(msg.ref, NOTICES.notAllowed));
  }
}
