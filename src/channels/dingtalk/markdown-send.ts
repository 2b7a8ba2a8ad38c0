/**
 * Plain (non-card) replies: one markdown message through the message's sessionWebhook, or
 * through the robot send APIs once the webhook has expired (or DingTalk says its session is gone).
 */
import { randomUUID } from "node:crypto";
import { ChannelError, PlatformNotFoundError, PlatformRateLimitError, TargetUnreachableError } from "../../errors.js";
import type { Logger } from "../../log/logger.js";
import type { ConversationRef } from "../types.js";
import type { DingTalkApi } from "./api.js";
import { markdownTitle, toDingTalkMarkdown } from "./format.js";

/** Do not start a webhook post this close to the webhook's expiry. */
const WEBHOOK_SAFETY_MS = 10_000;

export interface MarkdownSenderOptions {
  channel: string;
  api: DingTalkApi;
  logger: Logger;
  robotCode: (ref: ConversationRef) => string;
}

/** Sends `text` (the agent's Markdown) as one DingTalk markdown message; returns a message id. */
export async function sendMarkdown(opts: MarkdownSenderOptions, ref: ConversationRef, text: string): Promise<string> {
  const title = markdownTitle(text);
  const markdown = toDingTalkMarkdown(text) || " ";
  const hook = ref.extra?.sessionWebhook;
  const expires = ref.extra?.sessionWebhookExpiredTime;
  const fresh = typeof expires !== "number" || expires - WEBHOOK_SAFETY_MS > Date.now();
  if (typeof hook === "string" && fresh) {
    try {
      await opts.api.postWebhook(hook, { msgtype: "markdown", markdown: { title, text: markdown } });
      // The webhook answers only {errcode:0}; the id is ours, since such messages cannot be edited.
      return `webhook-${randomUUID()}`;
    } catch (err) {
      if (!(err instanceof PlatformNotFoundError)) throw err;
      opts.logger.info({ key: ref.key }, "dingtalk sessionWebhook gone; sending through the robot API");
    }
  }
  return sendByRobot(opts, ref, title, markdown);
}

function sendByRobot(opts: MarkdownSenderOptions, ref: ConversationRef, title: string, markdown: string) {
  return sendRobotMessage(opts, ref, "sampleMarkdown", { title, text: markdown });
}

/**
 * Sends one robot message of template `msgKey` through the proactive send APIs: the group send
 * in groups, the one-to-one batch send (which needs the partner's staff id) in DMs. Returns an id.
 */
export async function sendRobotMessage(
  opts: MarkdownSenderOptions,
  ref: ConversationRef,
  msgKey: string,
  msgParam: Record<string, string>,
): Promise<string> {
  const common = { robotCode: opts.robotCode(ref), msgKey, msgParam: JSON.stringify(msgParam) };
  let data: Record<string, unknown>;
  if (ref.chatType === "group") {
    data = await opts.api.call(
      "POST",
      "/v1.0/robot/groupMessages/send",
      { ...common, openConversationId: ref.chatId },
      "robot groupMessages/send",
    );
  } else {
    const staff = ref.extra?.staffId;
    if (typeof staff !== "string" || !staff) {
      throw new ChannelError(
        opts.channel,
        "not_supported",
        `the DM partner has no staff id, which the robot API needs to send ${msgKey} outside the sessionWebhook`,
      );
    }
    data = await opts.api.call(
      "POST",
      "/v1.0/robot/oToMessages/batchSend",
      { ...common, userIds: [staff] },
      "robot oToMessages/batchSend",
    );
    refusedStaff(opts.channel, staff, data);
  }
  return typeof data.processQueryKey === "string" ? data.processQueryKey : `robot-${randomUUID()}`;
}

/**
 * `batchSend` answers 200 even when it posts nothing: a staff id it cannot reach (not in the
 * organisation, outside the app's visible range) comes back in `invalidStaffIdList`, one sent
 * too often in `flowControlledStaffIdList`.
 */
function refusedStaff(channel: string, staff: string, data: Record<string, unknown>): void {
  const listed = (key: string) => Array.isArray(data[key]) && (data[key] as unknown[]).includes(staff);
  if (listed("invalidStaffIdList")) {
    throw new TargetUnreachableError(channel, `robot oToMessages/batchSend: staff id ${staff} is invalid (invalidStaffIdList)`);
  }
  if (listed("flowControlledStaffIdList")) {
    throw new PlatformRateLimitError(channel, 60_000, `robot oToMessages/batchSend: staff id ${staff} is flow-controlled`);
  }
}
