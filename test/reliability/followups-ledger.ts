/**
 * Counting for the follow-ups probe, where one reply may answer several messages (a collected
 * bucket, messages steered into a run) and one notice may end several (a restart notice covers
 * a crashed turn's leader and the followers recorded with it).
 *
 * - A bot message is a complete answer (it names the tokens it answers, followups-script.ts), a
 *   partial (the start of one, cut off, or a reply that only showed its `⏳` progress line), a
 *   pointer, or a notice (anything else: restart, interrupted, too many follow-ups, busy, …).
 * - A message named by one complete answer is answered; by two or more, a duplicate.
 * - The messages no answer names are put into groups: a follower the gateway recorded with a
 *   leader (the inbox note, group.ts) is in its leader's group, any other message is a group of
 *   its own. Each notice in the chat ends one group of its kind, taken from the leader's inbox
 *   note: a restart notice one the restart cut, a "too many follow-ups" notice a refused
 *   message, a busy notice one the full queue refused, any other notice (interrupted, failed)
 *   any other group. Groups left over are lost; notices left over are extra (noted).
 * - The inbox is read too (the gateway's own record, `antler_inbox` in its SQLite file): every
 *   message must have one entry, finished (done or failed), and a follower recorded as answered
 *   with its leader must be named by a complete answer.
 */
import Database from "better-sqlite3";
import { answeredTokens, isPartialAnswer, TOKEN } from "./followups-script.js";
import { emptyOutcome, type Outcome } from "./ledger.js";
import { tally } from "./util.js";

const POINTER = /continues in full in the next message/i;
/** A reply that showed only its progress line (`⏳ Thinking…`) when its run was cut off: no notice. */
const STATUS = /^⏳/;
/** The inbox notes that name a leader (src/core/followups/group.ts, src/core/recovery.ts). */
const LEADER_NOTE = /^(?:answered with|interrupted by a restart with|in the turn of|steered to) (.+?)(?:, which failed)?$/;

export interface SentFollowup {
  token: string;
  chat: number;
  /** Its place among the chat's messages (sent in this order). */
  index: number;
  sentAt: number;
}

export interface ChatMessageView {
  text: string;
  firstAt: number;
}

export interface InboxRecord {
  eventId: string;
  state: string;
  note: string | undefined;
}

/** The inbox entries of the probe's messages, by token (several when a message was recorded twice). */
export function readInbox(dbFile: string): Map<string, InboxRecord[]> {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  try {
    const rows = db.prepare("SELECT event_id, state, error, payload FROM antler_inbox").all() as Array<{
      event_id: string;
      state: string;
      error: string | null;
      payload: string;
    }>;
    const out = new Map<string, InboxRecord[]>();
    for (const row of rows) {
      const text = (JSON.parse(row.payload) as { text?: string }).text ?? "";
      const token = text.match(TOKEN)?.[0];
      if (!token) continue;
      const record = { eventId: row.event_id, state: row.state, note: row.error ?? undefined };
      out.set(token, [...(out.get(token) ?? []), record]);
    }
    return out;
  } finally {
    db.close();
  }
}

export interface FollowupOutcome {
  outcome: Outcome;
  failures: string[];
  /** Messages answered in one reply together with others. */
  grouped: number;
  /** Replies that named a message before an earlier one of the same chat, and the chats they were in. */
  outOfOrder: number;
  chatsOutOfOrder: number;
  /** Followers without an answer of their own, ended by the notice of their leader's group. */
  noticedWithLeader: number;
  /** Messages whose inbox entry is not finished (received or running). */
  unfinished: number;
  /** Followers recovery ended with their crashed leader (`interrupted by a restart with …`). */
  crashedFollowers: number;
  /** What some chats with a problem showed, in order (for the evidence column). */
  stories: string[];
}

export function evaluateFollowups(
  sent: SentFollowup[],
  view: (chat: number) => ChatMessageView[],
  inbox: Map<string, InboxRecord[]>,
): FollowupOutcome {
  const out: FollowupOutcome = {
    outcome: emptyOutcome(sent.length),
    failures: [],
    grouped: 0,
    outOfOrder: 0,
    chatsOutOfOrder: 0,
    noticedWithLeader: 0,
    unfinished: 0,
    crashedFollowers: 0,
    stories: [],
  };
  const noticeTexts: string[] = [];
  const byEvent = new Map<string, string>();
  for (const [token, records] of inbox) for (const r of records) byEvent.set(r.eventId, token);
  const chats = new Map<number, SentFollowup[]>();
  for (const m of sent) chats.set(m.chat, [...(chats.get(m.chat) ?? []), m]);
  const problems = { unrecorded: 0, twice: 0, strangers: 0, uncovered: 0 };
  for (const [chat, mine] of chats) {
    const seen = evaluateChat(mine, view(chat), inbox, byEvent, out);
    noticeTexts.push(...seen.notices);
    problems.strangers += seen.strangers;
    problems.uncovered += seen.uncovered;
  }
  for (const m of sent) {
    const records = inbox.get(m.token) ?? [];
    if (records.length === 0) problems.unrecorded++;
    if (records.length > 1) problems.twice++;
    if (records.some((r) => r.state === "received" || r.state === "running")) out.unfinished++;
    if (records.some((r) => r.note?.startsWith("interrupted by a restart with"))) out.crashedFollowers++;
  }
  out.outcome.notices = tally(noticeTexts);
  const f = out.failures;
  if (problems.unrecorded) f.push(`${problems.unrecorded} message(s) have no inbox entry (never accepted)`);
  if (problems.twice) f.push(`${problems.twice} message(s) were recorded twice in the inbox`);
  if (out.unfinished) f.push(`${out.unfinished} message(s) left unfinished in the inbox (received or running)`);
  if (problems.strangers) f.push(`${problems.strangers} answer(s) named a message that was not sent in that chat`);
  if (problems.uncovered) {
    f.push(`${problems.uncovered} follower(s) recorded as answered with their leader, but no complete answer names them`);
  }
  if (out.outOfOrder) {
    f.push(
      `${out.outOfOrder} answer(s) in ${out.chatsOutOfOrder} chat(s) named a message sent before one an earlier answer named`,
    );
  }
  return out;
}

/** One chat: its answers, partials and notices, counted into `out`. */
function evaluateChat(
  sent: SentFollowup[],
  bot: ChatMessageView[],
  inbox: Map<string, InboxRecord[]>,
  byEvent: Map<string, string>,
  out: FollowupOutcome,
): { notices: string[]; strangers: number; uncovered: number } {
  const o = out.outcome;
  const problemsBefore = o.lost + o.duplicates + out.outOfOrder;
  const answers: Array<{ tokens: string[]; text: string; at: number }> = [];
  const partials: string[] = [];
  const notices: string[] = [];
  for (const b of bot) {
    const text = b.text.trim();
    const tokens = answeredTokens(text);
    if (tokens) answers.push({ tokens, text, at: b.firstAt });
    else if (POINTER.test(text)) o.pointers++;
    else if (isPartialAnswer(text) || STATUS.test(text)) partials.push(text);
    else if (text) notices.push(shorten(text));
  }
  // A partial is the same reply as a complete answer only when it shows the whole list of tokens
  // (a cut-off answer to c1m0 starts the same as a later answer to c1m0 and c1m3).
  for (const p of partials) {
    const head = /^Answer to [^:]*: /.exec(p)?.[0];
    if (head && answers.some((a) => a.text.startsWith(head) && a.text.startsWith(p))) o.partialsBesideReply++;
    else o.stalePartials++;
  }
  const index = new Map(sent.map((m) => [m.token, m]));
  const named = new Map<string, number>();
  let strangers = 0;
  for (const a of answers) {
    for (const t of a.tokens) {
      if (!index.has(t)) strangers++;
      named.set(t, (named.get(t) ?? 0) + 1);
    }
    if (a.tokens.length > 1) out.grouped += a.tokens.length;
  }
  const inverted = inversions(answers, index);
  out.outOfOrder += inverted;
  if (inverted) out.chatsOutOfOrder++;
  // Groups of unanswered messages: a follower goes with the leader the inbox recorded it with.
  const groups = new Map<string, SentFollowup[]>();
  let uncovered = 0;
  for (const m of sent) {
    const n = named.get(m.token) ?? 0;
    if (n > 1) o.duplicates++;
    if (n === 1) o.answeredOnce++;
    if (n > 0) continue;
    const record = inbox.get(m.token)?.[0];
    const leaderEvent = record?.note ? LEADER_NOTE.exec(record.note)?.[1] : undefined;
    const leader = leaderEvent ? byEvent.get(leaderEvent) : undefined;
    if (record?.state === "done" && leader && record.note?.startsWith("answered with") && !record.note.includes("failed")) {
      uncovered++;
    }
    const key = leader && index.has(leader) ? leader : m.token;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  const kindOf = (token: string) => groupKind(inbox.get(token)?.[0]?.note);
  const matched = matchNotices(
    [...groups.entries()].map(([key, msgs]) => ({ kind: kindOf(key), msgs })),
    notices.map(noticeKind),
  );
  out.noticedWithLeader += matched.covered.reduce((k, g) => k + g.length - 1, 0);
  const covered = matched.covered.flat();
  o.byNotice += covered.length;
  o.answeredOnce += covered.length;
  o.lost += matched.lost.length;
  o.lostIds.push(...matched.lost.map((m) => m.token));
  o.extraNotices += matched.extra;
  if (o.lost + o.duplicates + out.outOfOrder > problemsBefore && out.stories.length < 4)
    out.stories.push(story(sent, bot, inbox));
  return { notices, strangers, uncovered };
}

type Kind = "restart" | "refused" | "busy" | "other";

/** The notice a group without an answer must get, from its leader's inbox note. */
function groupKind(note: string | undefined): Kind {
  if (note?.startsWith("interrupted by a restart")) return "restart";
  if (note === "too many follow-ups") return "refused";
  if (note === "conversation queue full") return "busy";
  return "other";
}

function noticeKind(text: string): Kind {
  if (/I was restarted/.test(text)) return "restart";
  if (/messages waiting for this reply/.test(text)) return "refused";
  if (/still working through your earlier messages/.test(text)) return "busy";
  return "other";
}

/** Each notice ends one group of its kind (the earliest first); groups left over are lost, notices left over extra. */
function matchNotices(
  groups: Array<{ kind: Kind; msgs: SentFollowup[] }>,
  notices: Kind[],
): { covered: SentFollowup[][]; lost: SentFollowup[]; extra: number } {
  const left = new Map<Kind, number>();
  for (const k of notices) left.set(k, (left.get(k) ?? 0) + 1);
  const out = { covered: [] as SentFollowup[][], lost: [] as SentFollowup[], extra: 0 };
  for (const g of [...groups].sort((x, y) => (x.msgs[0]?.index ?? 0) - (y.msgs[0]?.index ?? 0))) {
    const n = left.get(g.kind) ?? 0;
    if (n > 0) {
      left.set(g.kind, n - 1);
      out.covered.push(g.msgs);
    } else out.lost.push(...g.msgs);
  }
  out.extra = [...left.values()].reduce((a, b) => a + b, 0);
  return out;
}

/** Answers (in the order they appeared) that name a message sent before one an earlier answer named. */
function inversions(answers: Array<{ tokens: string[]; at: number }>, index: Map<string, SentFollowup>): number {
  let highest = -1;
  let count = 0;
  for (const a of [...answers].sort((x, y) => x.at - y.at)) {
    const places = a.tokens.map((t) => index.get(t)?.index ?? -1);
    if (places.some((p, i) => p < highest || (i > 0 && p < (places[i - 1] ?? -1)))) count++;
    highest = Math.max(highest, ...places);
  }
  return count;
}

/** One chat in one line: each bot message in order (A: an answer and the indexes it names, P: a partial, N: a notice), then the inbox. */
function story(sent: SentFollowup[], bot: ChatMessageView[], inbox: Map<string, InboxRecord[]>): string {
  const at = (t: string) => t.replace(/^c\d+m/, "");
  const shown = bot.map((b) => {
    const tokens = answeredTokens(b.text);
    if (tokens) return `A(${tokens.map(at).join(",")})`;
    if (isPartialAnswer(b.text)) return "P";
    return `N(${b.text.replace(/^⚠️\s*/, "").slice(0, 14)})`;
  });
  const states = sent.map((m) => {
    const r = inbox.get(m.token)?.[0];
    return `${m.index}:${r?.state ?? "-"}${r?.note ? `[${r.note.slice(0, 40)}]` : ""}`;
  });
  return `chat ${sent[0]?.token.replace(/m\d+$/, "")}: ${shown.join(" ")} | inbox ${states.join(" ")}`;
}

function shorten(text: string): string {
  const t = text.replace(/^⚠️\s*/, "").replace(/\s+/g, " ");
  return t.length > 72 ? `${t.slice(0, 71)}…` : t;
}
