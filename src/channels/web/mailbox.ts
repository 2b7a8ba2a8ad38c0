/**
 * The web chat's mailbox: what the bot posted in each conversation, so a page that opens later
 * (or reloads) still shows messages the agent's checkpoint never holds, e.g. one sent first
 * through `POST /api/send`. Kept in memory: a restart forgets it (see README.md).
 */
import type { HistoryEntry } from "../../harness/types.js";
import { RecentMap } from "../kit/recent.js";

/** Messages kept per conversation; the oldest go first. */
const PER_CONVERSATION = 50;
/** Conversations kept; the idlest go first. */
const CONVERSATIONS = 1000;

/** A bot message as the history shows it. */
export interface MailItem {
  id: string;
  text: string;
  html: string;
  at: number;
  /**
   * The checkpoint's last message when this one was posted: the history shows it right after
   * that one (`null`: the thread was empty, so first). Undefined until read, or without a history.
   */
  after?: string | null;
}

/** One message of the history as the page reads it. */
export interface HistoryMessage {
  id: string;
  role: "user" | "assistant";
  text: string;
  html: string;
}

export class Mailbox {
  private readonly boxes = new RecentMap<MailItem[]>(CONVERSATIONS);

  /** Keeps a message the bot posted in conversation `key`. */
  post(key: string, item: MailItem): void {
    const box = this.boxes.get(key) ?? [];
    box.push(item);
    if (box.length > PER_CONVERSATION) box.shift();
    this.boxes.set(key, box);
  }

  /** Shows an edit in the kept message, if it is still kept. */
  edit(key: string, id: string, text: string, html: string): void {
    const item = this.boxes.get(key)?.find((m) => m.id === id);
    if (!item) return;
    item.text = text;
    item.html = html;
  }

  /**
   * The history a page shows: the checkpoint's messages, with each kept message the checkpoint
   * does not hold (its text is not one of the assistant's there) placed after the message that
   * was last when it was posted, or at the end when that is not known yet. One whose message is
   * gone belonged to a thread the conversation left (`/new`), and is not shown.
   */
  merge(key: string, history: HistoryMessage[]): HistoryMessage[] {
    const box = this.boxes.get(key);
    if (!box?.length) return history;
    const said = new Set(history.filter((m) => m.role === "assistant").map((m) => m.text.trim()));
    const extra = box.filter((m) => m.text.trim() !== "" && !said.has(m.text.trim()));
    if (!extra.length) return history;
    const before = new Map<string | null, HistoryMessage[]>();
    const tail: HistoryMessage[] = [];
    const ids = new Set(history.map((m) => m.id));
    for (const m of extra) {
      const shown: HistoryMessage = { id: m.id, role: "assistant", text: m.text, html: m.html };
      if (m.after === undefined) tail.push(shown);
      else if (m.after === null || ids.has(m.after)) {
        const list = before.get(m.after) ?? [];
        list.push(shown);
        before.set(m.after, list);
      }
      // Else it followed a message of a thread the conversation left (`/new`): not shown.
    }
    const out = [...(before.get(null) ?? [])];
    for (const m of history) out.push(m, ...(before.get(m.id) ?? []));
    return [...out, ...tail];
  }
}

/** The id of the checkpoint's last message, or null when it holds none. */
export function lastEntryId(messages: HistoryEntry[]): string | null {
  return messages.at(-1)?.id ?? null;
}
