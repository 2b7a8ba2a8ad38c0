/**
 * Counting, the same way for every probe. Each message a user sent has at most one reply text
 * that only it can get, so every bot message in a chat is one of: a final reply (exactly that
 * text), a partial (a prefix of one, or the "part0 part1" a broken stream showed), a pointer (a
 * partial the gateway replaced by a full copy), or a notice (anything else: an error, restart or
 * busy notice). Per chat, a message without a final reply
 * is answered by a notice if one is left over, else it is lost. More than one final reply for a
 * message is a duplicate, unless the extra copy was posted by a call the platform applied and
 * then answered with a 5xx (the proxy records those, see telegram.ts): those are counted apart.
 */
import { FAULT_PREFIX } from "./model.js";
import { tally } from "./util.js";

/** What the renderer writes into a partial that a new full copy replaced (src/core/render/reply.ts). */
const POINTER = /continues in full in the next message/i;

export interface SentMessage {
  id: string;
  chat: string;
  /** The reply only this message can get; undefined when its run cannot succeed (a model fault). */
  expected: string | undefined;
  sentAt: number;
}

export interface BotMessage {
  id: string;
  text: string;
  firstAt: number;
}

export interface Outcome {
  messages: number;
  answeredOnce: number;
  lost: number;
  duplicates: number;
  /** Messages answered by a notice only. */
  byNotice: number;
  /** Extra final copies made by a call the platform applied and then failed with a 5xx. */
  excusedCopies: number;
  /** Notice texts seen (shortened), with counts. */
  notices: Map<string, number>;
  /** Notices in chats where every message already had its reply. */
  extraNotices: number;
  /** Partial replies whose message never got a complete copy (cut off by a crash or a fault). */
  stalePartials: number;
  /** Partial replies left beside a complete copy of the same reply (the "stale partial"). */
  partialsBesideReply: number;
  /** Partials created by a call the platform applied and then failed (the gateway cannot know them). */
  excusedPartials: number;
  /** Partials the gateway edited to point at the full copy that follows. */
  pointers: number;
  lostIds: string[];
  /** Per answered message: ms from sending to the first text of its reply. */
  firstTextMs: number[];
  /** When the last final reply first appeared (ms epoch), for total times. */
  lastReplyAt: number;
}

export class Ledger {
  readonly sent: SentMessage[] = [];

  add(message: SentMessage): void {
    this.sent.push(message);
  }

  evaluate(view: (chat: string) => BotMessage[], excused: Set<string> = new Set()): Outcome {
    const out = emptyOutcome(this.sent.length);
    const chats = new Map<string, SentMessage[]>();
    for (const m of this.sent) chats.set(m.chat, [...(chats.get(m.chat) ?? []), m]);
    const noticeTexts: string[] = [];
    for (const [chat, sent] of chats) this.evaluateChat(sent, view(chat), excused, out, noticeTexts);
    out.notices = tally(noticeTexts);
    return out;
  }

  /**
   * The answers in one chat as they first appeared: each message's first complete reply, and for
   * messages without one the chat's notices, given in the order those messages were sent (as
   * `evaluate` counts them). A chat whose answers are in order lists its ids in the order sent.
   */
  answers(chat: string, bot: BotMessage[]): Array<{ id: string; at: number }> {
    const sent = this.sent.filter((m) => m.chat === chat);
    const out: Array<{ id: string; at: number }> = [];
    const notices: BotMessage[] = [];
    for (const b of bot) {
      const seen = classify(b, sent);
      if (seen.kind === "final" && !out.some((a) => a.id === seen.owner.id)) out.push({ id: seen.owner.id, at: b.firstAt });
      if (seen.kind === "notice") notices.push(b);
    }
    const unanswered = sent.filter((m) => !out.some((a) => a.id === m.id));
    unanswered.forEach((m, i) => {
      const notice = notices[i];
      if (notice) out.push({ id: m.id, at: notice.firstAt });
    });
    return out.sort((x, y) => x.at - y.at);
  }

  private evaluateChat(sent: SentMessage[], bot: BotMessage[], excused: Set<string>, out: Outcome, noticeTexts: string[]): void {
    const finals = new Map<string, BotMessage[]>();
    const partials: Array<{ b: BotMessage; owner: SentMessage | undefined }> = [];
    const notices: string[] = [];
    for (const b of bot) {
      const seen = classify(b, sent);
      if (seen.kind === "final") finals.set(seen.owner.id, [...(finals.get(seen.owner.id) ?? []), b]);
      else if (seen.kind === "pointer") out.pointers++;
      else if (seen.kind === "partial") partials.push({ b, owner: seen.owner });
      else notices.push(shorten(b.text.trim()));
    }
    for (const { b, owner } of partials) {
      if (excused.has(b.id)) out.excusedPartials++;
      else if (owner && finals.has(owner.id)) out.partialsBesideReply++;
      else out.stalePartials++;
    }
    let unanswered = 0;
    const unansweredIds: string[] = [];
    for (const m of sent) {
      const copies = finals.get(m.id) ?? [];
      if (copies.length === 0) {
        unanswered++;
        unansweredIds.push(m.id);
        continue;
      }
      const first = copies[0] as BotMessage;
      out.firstTextMs.push(first.firstAt - m.sentAt);
      out.lastReplyAt = Math.max(out.lastReplyAt, first.firstAt);
      const excusedCopies = Math.min(copies.length - 1, copies.filter((c) => excused.has(c.id)).length);
      out.excusedCopies += excusedCopies;
      if (copies.length - excusedCopies > 1) out.duplicates++;
      else out.answeredOnce++;
    }
    const byNotice = Math.min(unanswered, notices.length);
    out.byNotice += byNotice;
    out.answeredOnce += byNotice;
    out.lost += unanswered - byNotice;
    out.lostIds.push(...unansweredIds.slice(byNotice));
    out.extraNotices += notices.length - byNotice;
    noticeTexts.push(...notices);
  }
}

type Seen =
  | { kind: "final"; owner: SentMessage }
  | { kind: "pointer" }
  | { kind: "partial"; owner: SentMessage | undefined }
  | { kind: "notice" };

/** What one bot message is, among the messages `sent` in its chat. */
function classify(b: BotMessage, sent: SentMessage[]): Seen {
  const text = b.text.trim();
  const owner = sent.find((m) => m.expected === text);
  if (owner) return { kind: "final", owner };
  if (POINTER.test(text)) return { kind: "pointer" };
  if (FAULT_PREFIX.test(text)) return { kind: "partial", owner: undefined };
  const prefixOf = sent.find((m) => m.expected?.startsWith(text));
  if (prefixOf) return { kind: "partial", owner: prefixOf };
  return { kind: "notice" };
}

function shorten(text: string): string {
  const t = text.replace(/^⚠️\s*/, "").replace(/\s+/g, " ");
  return t.length > 72 ? `${t.slice(0, 71)}…` : t;
}

/** An outcome with nothing counted yet, for `messages` sent. */
export function emptyOutcome(messages: number): Outcome {
  return {
    messages,
    answeredOnce: 0,
    lost: 0,
    duplicates: 0,
    byNotice: 0,
    excusedCopies: 0,
    notices: new Map(),
    extraNotices: 0,
    stalePartials: 0,
    partialsBesideReply: 0,
    excusedPartials: 0,
    pointers: 0,
    lostIds: [],
    firstTextMs: [],
    lastReplyAt: 0,
  };
}
