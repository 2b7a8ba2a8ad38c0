/**
 * What the fake Feishu stores, and how a user would read it: a card's markdown becomes the text
 * a person sees (markup gone, entities decoded), its callback buttons become labels.
 */
import { Lexer, type Token } from "marked";

export interface FakeReaction {
  id: string;
  emoji: string;
}

export interface FakeMessage {
  id: string;
  chatId: string;
  chatType: "p2p" | "group";
  /** Topic root; set for messages in a thread (and quote replies). */
  rootId?: string;
  parentId?: string;
  /** True when the message sits inside the topic (reply_in_thread or posted in one). */
  inThread: boolean;
  from: "user" | "bot";
  senderOpenId: string;
  msgType: string;
  /** Raw `content` JSON string as last set. */
  content: string;
  /** For cards sent by card_id. */
  cardId?: string;
  /** Card JSON for cards sent inline. */
  card?: CardJson;
  text: string;
  buttons: FakeButton[];
  versions: Array<{ text: string; at: number }>;
  edits: number;
  reactions: FakeReaction[];
  createdAt: number;
}

export interface FakeButton {
  label: string;
  value: unknown;
}

export interface CardJson {
  schema?: string;
  config?: { update_multi?: boolean; streaming_mode?: boolean; [k: string]: unknown };
  body?: { elements?: CardElement[] };
  [k: string]: unknown;
}

export interface CardElement {
  tag?: string;
  element_id?: string;
  content?: string;
  text?: { tag?: string; content?: string };
  behaviors?: Array<{ type?: string; value?: unknown }>;
  elements?: CardElement[];
  columns?: Array<{ elements?: CardElement[] }>;
  [k: string]: unknown;
}

/** A CardKit card entity. */
export interface FakeCard {
  id: string;
  card: CardJson;
  sequence: number;
  /** Message that shows it, once sent (a card entity can be sent once). */
  messageId?: string;
  /** Timestamps of recent operations, for the 10/s limit. */
  ops: number[];
  /** Every sequence the platform accepted, in order. */
  sequences: number[];
}

/** Checks the parts of a card JSON 2.0 the platform checks; returns a problem or undefined. */
export function cardProblem(card: unknown): string | undefined {
  const c = card as CardJson;
  if (!c || typeof c !== "object") return "card is not an object";
  if (c.schema !== "2.0") return 'card schema must be "2.0"';
  if (!Array.isArray(c.body?.elements)) return "card body.elements must be a list";
  for (const el of walk(c.body.elements)) {
    if (el.tag === "markdown" && typeof el.content !== "string") return "markdown element without content";
    if (el.tag === "button" && typeof el.text?.content !== "string") return "button without text";
    if (el.tag === "action") return 'card 2.0 has no "action" container';
  }
  return undefined;
}

function* walk(elements: CardElement[]): Generator<CardElement> {
  for (const el of elements) {
    yield el;
    if (el.elements) yield* walk(el.elements);
    for (const col of el.columns ?? []) yield* walk(col.elements ?? []);
  }
}

export function cardText(card: CardJson): string {
  const parts: string[] = [];
  for (const el of walk(card.body?.elements ?? [])) {
    if (el.tag === "markdown" && typeof el.content === "string") parts.push(markdownToVisible(el.content));
    if (el.tag === "div" && typeof el.text?.content === "string") parts.push(el.text.content);
  }
  return parts.filter((p) => p !== "").join("\n");
}

export function cardButtons(card: CardJson): FakeButton[] {
  const out: FakeButton[] = [];
  for (const el of walk(card.body?.elements ?? [])) {
    if (el.tag !== "button") continue;
    const callback = el.behaviors?.find((b) => b.type === "callback");
    out.push({ label: el.text?.content ?? "", value: callback?.value });
  }
  return out;
}

/** Plain text of a `text` or `post` message. */
export function messageText(msgType: string, content: string): string {
  const parsed = JSON.parse(content) as { text?: string; content?: Array<Array<{ tag?: string; text?: string }>> };
  if (msgType === "text") return parsed.text ?? "";
  if (msgType === "post") return (parsed.content ?? []).map((p) => p.map((e) => e.text ?? "").join("")).join("\n");
  return "";
}

/** What a person reads from card markdown. Character references show as characters, except in code. */
export function markdownToVisible(markdown: string): string {
  return blocks(new Lexer({ gfm: true }).lex(markdown)).trim();
}

function blocks(tokens: Token[]): string {
  return tokens
    .filter((t) => t.type !== "space")
    .map(block)
    .join("\n\n");
}

function block(t: Token): string {
  if (t.type === "list") {
    return (t.items as Array<{ tokens: Token[] }>)
      .map((item, i) => `${t.ordered ? `${(Number(t.start) || 1) + i}.` : "-"} ${blocks(item.tokens)}`)
      .join("\n");
  }
  if (t.type === "code") return t.text as string;
  if (t.type === "hr") return "";
  if (t.type === "blockquote") return blocks(t.tokens ?? []);
  if (t.type === "table") {
    const row = (cells: Array<{ tokens: Token[] }>) => cells.map((c) => inline(c.tokens)).join(" | ");
    return [row(t.header), ...(t.rows as Array<Array<{ tokens: Token[] }>>).map(row)].join("\n");
  }
  return "tokens" in t && t.tokens ? inline(t.tokens) : decode(String("text" in t ? t.text : ""));
}

function inline(tokens: Token[]): string {
  return tokens
    .map((t) => {
      if (t.type === "br") return "\n";
      if (t.type === "codespan") return t.text;
      if ("tokens" in t && t.tokens) return inline(t.tokens);
      return decode(String("text" in t ? t.text : ""));
    })
    .join("");
}

function decode(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}
