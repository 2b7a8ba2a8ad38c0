/**
 * What the fake Feishu stores, and how a user would read it: a card's markdown becomes the text
 * a person sees (markup gone, entities decoded), its callback buttons become labels. A card's
 * secondary sections (notation-size markdown, collapsible panels) are read apart from its body
 * text, as `notes`: a panel shows its header, and its content only while expanded.
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
  /** A card's secondary sections as a person sees them (see {@link cardNotes}); absent for other messages. */
  notes?: string[];
  versions: Array<{ text: string; notes?: string[]; at: number }>;
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

/** An `element_id`: letters, digits and `_`, starting with a letter, 1 to 20 characters; unique in its card. */
export const ELEMENT_ID = /^[A-Za-z][A-Za-z0-9_]{0,19}$/;

/** Checks the parts of a card JSON 2.0 the platform checks; returns a problem or undefined. */
export function cardProblem(card: unknown): string | undefined {
  const c = card as CardJson;
  if (!c || typeof c !== "object") return "card is not an object";
  if (c.schema !== "2.0") return 'card schema must be "2.0"';
  if (!Array.isArray(c.body?.elements)) return "card body.elements must be a list";
  const ids = new Set<string>();
  for (const el of walk(c.body.elements)) {
    const problem = elementProblem(el, ids);
    if (problem) return problem;
  }
  return undefined;
}

function elementProblem(el: CardElement, ids: Set<string>): string | undefined {
  if (!el || typeof el !== "object") return "an element is not an object";
  if (el.element_id !== undefined) {
    if (typeof el.element_id !== "string" || !ELEMENT_ID.test(el.element_id))
      return `invalid element_id ${String(el.element_id)}`;
    if (ids.has(el.element_id)) return `element_id ${el.element_id} is used twice`;
    ids.add(el.element_id);
  }
  if (el.tag === "markdown" && typeof el.content !== "string") return "markdown element without content";
  if (el.tag === "button" && typeof el.text?.content !== "string") return "button without text";
  if (el.tag === "action") return 'card 2.0 has no "action" container';
  if (el.tag === "collapsible_panel") {
    const header = el.header as { title?: { tag?: unknown; content?: unknown } } | undefined;
    if (!header || typeof header !== "object") return "collapsible_panel without header";
    const title = header.title;
    if (title && (!["plain_text", "markdown"].includes(String(title.tag)) || typeof title.content !== "string"))
      return "collapsible_panel header.title must be plain_text or markdown with content";
    if (el.elements !== undefined && !Array.isArray(el.elements)) return "collapsible_panel elements must be a list";
    if (el.expanded !== undefined && typeof el.expanded !== "boolean") return "collapsible_panel expanded must be a boolean";
    for (const inner of walk(el.elements ?? [])) if (inner.tag === "form") return "a collapsible_panel cannot hold a form";
  }
  return undefined;
}

/** Every element, containers' contents included; `skipPanels` leaves out what collapsible panels hold. */
function* walk(elements: CardElement[], skipPanels = false): Generator<CardElement> {
  for (const el of elements) {
    yield el;
    if (skipPanels && el.tag === "collapsible_panel") continue;
    if (el.elements) yield* walk(el.elements, skipPanels);
    for (const col of el.columns ?? []) yield* walk(col.elements ?? [], skipPanels);
  }
}

/** The card's body text: its markdown and text elements, secondary sections left out (see {@link cardNotes}). */
export function cardText(card: CardJson): string {
  const parts: string[] = [];
  for (const el of walk(card.body?.elements ?? [], true)) {
    if (el.tag === "markdown" && typeof el.content === "string" && el.text_size !== "notation")
      parts.push(markdownToVisible(el.content));
    if (el.tag === "div" && typeof el.text?.content === "string") parts.push(el.text.content);
  }
  return parts.filter((p) => p !== "").join("\n");
}

/**
 * The card's secondary sections, line by line as a person sees them: a notation-size markdown
 * element's text, and a collapsible panel as `▸ header` (folded) or `▾ header` followed by what
 * it holds (expanded), nested panels alike.
 */
export function cardNotes(card: CardJson): string[] {
  return notesOf(card.body?.elements ?? [], false);
}

function notesOf(elements: CardElement[], inPanel: boolean): string[] {
  const out: string[] = [];
  for (const el of elements) {
    if (el.tag === "collapsible_panel") {
      const header = (el.header as { title?: { content?: unknown } } | undefined)?.title?.content;
      const open = el.expanded === true;
      out.push(`${open ? "▾" : "▸"} ${markdownToVisible(String(header ?? ""))}`);
      if (open) out.push(...notesOf(el.elements ?? [], true));
    } else if (el.tag === "markdown" && typeof el.content === "string" && (inPanel || el.text_size === "notation")) {
      out.push(...markdownToVisible(el.content).split("\n").filter(Boolean));
    } else if (el.elements) {
      out.push(...notesOf(el.elements, inPanel));
    }
  }
  return out;
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
  // `<font color=…>` only colours its text: the tags themselves show nothing.
  const uncoloured = markdown.replace(/<font\b[^>]*>|<\/font>/g, "");
  return blocks(new Lexer({ gfm: true }).lex(uncoloured)).trim();
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
