/**
 * The sink the core hands each channel: what every message meets before the inbox. A click from
 * someone the channel's access rules do not allow is answered with the refusal, to the clicker
 * alone, and goes no further. For a channel that never delivers an event again
 * (`capabilities.redelivers: false`), recording is tried again with a short backoff, and a
 * message that could never be recorded gets a notice in its chat, so it does not vanish.
 */
import { isAllowedUser } from "../channels/kit/access.js";
import type { AccessRules, Channel, InboundMessage, InboundSink, SinkOptions } from "../channels/types.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../log/logger.js";
import { tellPrivately } from "./answer-rights.js";
import type { CoreContext } from "./context.js";
import { NOTICES } from "./notices.js";
import type { ChannelScope } from "./scope.js";

/** The waits between tries to record a message of a channel that does not redeliver. */
export const SINK_BACKOFF_MS: readonly number[] = [250, 1000, 2500];

/**
 * Answers a click from a user the access rules do not allow with the refusal, privately; true
 * when it was one (the click is then not for the core to take).
 */
export async function refuseClick(channel: Channel, access: AccessRules, msg: InboundMessage, logger: Logger): Promise<boolean> {
  if (!msg.action || isAllowedUser(access, msg.user.id)) return false;
  logger.info({ channel: channel.name, user: msg.user.id }, "click refused: the user is not allowed");
  await tellPrivately(channel, msg, NOTICES.clickNotAllowed, logger);
  return true;
}

export type Receive = (scope: ChannelScope, msg: InboundMessage) => Promise<void>;

/** The sink of `scope`'s channel, handing what it takes to `receive`. */
export function channelSink(core: CoreContext, scope: ChannelScope, receive: Receive): InboundSink {
  return async (msg, options) => {
    if (await refuseClick(scope.channel, scope.access, msg, core.logger)) return;
    if (scope.channel.capabilities.redelivers !== false) return receive(scope, msg);
    await receiveWithRetries(core, scope, msg, receive, options);
  };
}

async function receiveWithRetries(
  core: CoreContext,
  scope: ChannelScope,
  msg: InboundMessage,
  receive: Receive,
  options: SinkOptions | undefined,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await receive(scope, msg);
    } catch (err) {
      const wait = SINK_BACKOFF_MS[attempt];
      scope.noteError(new Error(`[${scope.name}] a message was not recorded: ${errorMessage(err)}`));
      core.logger.warn({ err: errorMessage(err), channel: scope.name, retryInMs: wait }, "message not recorded");
      if (wait === undefined || !core.accepting) {
        if (!options?.answersSender) await tellNotTaken(scope, msg);
        throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** The platform will not send the message again, so the user hears that it was not taken. */
async function tellNotTaken(scope: ChannelScope, msg: InboundMessage): Promise<void> {
  if (msg.fromBot || (msg.ref.chatType === "group" && !msg.mentioned && !msg.inThread)) return;
  await scope.notify(msg.ref, NOTICES.notTaken);
}
