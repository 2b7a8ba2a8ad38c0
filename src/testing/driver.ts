/**
 * What the shared channel contract suite needs from each platform: a fake platform plus the
 * user's side of it. Every adapter's test file implements one `ContractDriver` over its fake
 * server and passes a factory to `channelContract()`. This is the fakes' common interface, as
 * `antler/testing` publishes it.
 */

/** One bot message as a user would see it in the chat. */
export interface VisibleMessage {
  /** Platform message id. */
  id: string;
  /** Current text, with platform markup removed (what a person reads). */
  text: string;
  /** Labels of the buttons shown under it now; empty when none. */
  buttons: string[];
  /** Every version the user saw, oldest first, with the time (ms) it appeared. */
  versions: Array<{ text: string; at: number }>;
  /** Platform thread the message is in, if any. */
  threadId?: string;
}

/** A member of the test group: the one who asks, someone else, and an approver (listed in `approvers`). */
export type GroupMember = "asker" | "other" | "approver";

/**
 * A group conversation with three members, for the "who may answer" tests. The asker's first
 * message opens it (mentioning the bot); later messages from anyone are follow-ups there that
 * address the bot the way the platform needs (a mention, or a reply in the bot's thread).
 */
export interface GroupDriver {
  /** Platform user id of a member; the suite lists the approver's under `approvers`. */
  userId(member: GroupMember): string;
  /**
   * Every member's messages land in one conversation (a Slack thread, a Feishu topic, a
   * Telegram group). False where each sender has their own (DingTalk `session_scope: user`).
   */
  readonly sharedThread: boolean;
  /** A refused click's notice reaches only the clicker (an ephemeral message, alert or toast). */
  readonly privateClickNotice: boolean;
  /** A refused message's notice reaches only its sender. */
  readonly privateTextNotice: boolean;
  /** `member` writes `text` in the group. Resolves once the fake delivered it. */
  says(member: GroupMember, text: string): Promise<void>;
  /** `member` clicks the button labelled `label` on the newest bot message in the group showing it. */
  click(member: GroupMember, label: string): Promise<void>;
  /** Bot messages in the group that every member sees, oldest first. */
  botMessages(): VisibleMessage[];
  /** Texts only `member` was shown: ephemeral messages and click answers (alerts, toasts). */
  shownOnlyTo(member: GroupMember): string[];
}

/** A file the user sends in the test conversation. */
export interface UserFile {
  /** `image` (a photo), `audio` (a voice note) or `file` (a document). */
  kind: "image" | "file" | "audio";
  name: string;
  mime: string;
  data: Uint8Array;
  /** Text sent with it (a photo's caption). */
  caption?: string;
}

/** A file the bot posted, as a user downloads it from the platform. */
export interface BotFile {
  name: string;
  data: Uint8Array;
  /** Shown as a photo, or as a document to download. */
  kind: "image" | "file";
}

export interface ContractDriver {
  /** Name the channel is configured under (`channels.<name>`). */
  readonly channelName: string;
  /**
   * The config section for the channel under test, pointing at this fake (`enabled: true` included).
   * `gatewayUrl` is where Antler's HTTP server will listen (for webhook modes), e.g. http://127.0.0.1:PORT.
   */
  channelConfig(env: { gatewayUrl: string }): Record<string, unknown>;
  /** Replies show partial text before the final one (edits or native streaming). */
  readonly streams: boolean;
  /** Questions show buttons; false = numbered options answered by text. */
  readonly buttons: boolean;
  /** Platform-level minimum interval between edits of one message in the test conversation, ms. */
  readonly minEditIntervalMs: number;
  /**
   * A user sends `text` to the bot in the test conversation (a DM unless the platform only has
   * groups; mention the bot where the platform needs it). Resolves once the fake delivered it.
   */
  userSays(text: string): Promise<void>;
  /** Delivers the last user event again, with the same event id (a platform retry). */
  redeliverLast(): Promise<void>;
  /**
   * What the platform saw for the last user event, once that is decided: `acked` (a 2xx, an ack
   * frame, an update confirmed) or `refused` (a non-2xx, no ack or an error ack, the update
   * fetched again). Resolves even when `userSays` found the delivery refused.
   */
  lastDelivery(): Promise<"acked" | "refused">;
  /** The channel takes events on a webhook route in this mode (so the routes part applies). */
  readonly webhook: boolean;
  /** The user clicks the button labelled `label` on the newest bot message showing it. */
  click(label: string): Promise<void>;
  /**
   * A message sent by the bot itself (or another bot) arrives as an inbound event. Absent where a
   * platform never shows the bot its own messages (the web chat): that test is then skipped.
   */
  botEcho?(text: string): Promise<void>;
  /** Bot messages in the test conversation, oldest first. */
  botMessages(): VisibleMessage[];
  /**
   * Documents can carry a caption (default true). False where the platform sends a document with
   * no text at all (Feishu's file messages): the media part then sends them without one.
   */
  readonly fileCaptions?: boolean;
  /** The user sends a file; without it the contract's `media` part is skipped. */
  userSendsFile?(file: UserFile): Promise<void>;
  /** Files the bot posted in the test conversation, oldest first. */
  botFiles?(): BotFile[];
  /** A group with three members, for the "who may answer" tests; without it they are skipped. */
  readonly group?: GroupDriver;
  /** Stops the fake. */
  close(): Promise<void>;
}
