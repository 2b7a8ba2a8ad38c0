/**
 * What DingTalk users see in the fake: markdown messages and AI cards per conversation, each
 * with every version that appeared, rendered to the plain text a person reads. A card shows only
 * the variables its template places: the content, the button list and, when the template has
 * one, a progress variable (as `notes`); other keys in its data stay unseen.
 */
import { lexer, type Token, type Tokens } from "marked";

export interface FakeButton {
  text: string;
  actionId: string;
  params: Record<string, unknown>;
}

export interface FakeCard {
  outTrackId: string;
  templateId: string;
  /** Card variables (cardParamMap), as strings like DingTalk keeps them. */
  params: Record<string, string>;
  /** 1 processing, 2 inputting, 3 finished, 5 failed. */
  flowStatus: string;
  /** Clicks go back over the stream connection. */
  streamCallbacks: boolean;
  /** Streaming calls received. */
  streamed: number;
}

export interface FakeMessage {
  id: string;
  conversationId: string;
  kind: "markdown" | "card";
  via: "webhook" | "robot" | "card";
  title: string;
  /** Current markdown as sent. */
  markdown: string;
  /** What a person reads. */
  text: string;
  buttons: FakeButton[];
  /** A card's progress variable as a person reads it, line by line, when its template has one. */
  notes?: string[];
  versions: Array<{ text: string; notes?: string[]; at: number }>;
  card?: FakeCard;
  /** The `processQueryKey` DingTalk answered a robot send with: the id the sender keeps. */
  queryKey?: string;
}

/** A file or picture the robot posted, as users download it. */
export interface FakeFile {
  id: string;
  conversationId: string;
  /** `image` shows inline (sampleImageMsg); `file` is a document to download (sampleFile). */
  kind: "image" | "file";
  name: string;
  mediaId: string;
  data: Uint8Array;
  /** Where a user's client downloads it from. */
  url: string;
}

/** The variables a card template places (openapi.ts `TemplateSpec`). */
export interface CardTemplate {
  contentKey: string;
  buttonsKey?: string;
  progressKey?: string;
}

export class FakeChat {
  readonly messages: FakeMessage[] = [];
  /** Files the robot posted; kept apart from `messages`, which hold what users read. */
  readonly files: FakeFile[] = [];
  private seq = 0;

  postFile(file: Omit<FakeFile, "id">): FakeFile {
    const posted = { id: `file-${++this.seq}`, ...file };
    this.files.push(posted);
    return posted;
  }

  filesIn(conversationId: string): FakeFile[] {
    return this.files.filter((f) => f.conversationId === conversationId);
  }

  post(conversationId: string, via: "webhook" | "robot", title: string, markdown: string): FakeMessage {
    const text = plain(markdown);
    const msg: FakeMessage = {
      id: `${via}-${++this.seq}`,
      conversationId,
      kind: "markdown",
      via,
      title,
      markdown,
      text,
      buttons: [],
      versions: [{ text, at: Date.now() }],
    };
    this.messages.push(msg);
    return msg;
  }

  addCard(conversationId: string, card: FakeCard, template: CardTemplate): FakeMessage {
    const msg: FakeMessage = {
      id: card.outTrackId,
      conversationId,
      kind: "card",
      via: "card",
      title: "",
      markdown: "",
      text: "",
      buttons: [],
      versions: [],
      card,
    };
    this.messages.push(msg);
    this.refreshCard(msg, template);
    return msg;
  }

  card(outTrackId: string): FakeMessage | undefined {
    return this.messages.find((m) => m.card?.outTrackId === outTrackId);
  }

  /** Re-renders a card from its variables; a new version appears when what users see changed. */
  refreshCard(msg: FakeMessage, template: CardTemplate): void {
    const params = msg.card?.params ?? {};
    msg.markdown = params[template.contentKey] ?? "";
    const text = plain(msg.markdown);
    const buttons = template.buttonsKey ? parseButtons(params[template.buttonsKey]) : [];
    const notes = template.progressKey
      ? plain(params[template.progressKey] ?? "")
          .split("\n")
          .filter(Boolean)
      : undefined;
    const changed =
      text !== msg.text ||
      buttons.map((b) => b.text).join("\n") !== msg.buttons.map((b) => b.text).join("\n") ||
      (notes ?? []).join("\n") !== (msg.notes ?? []).join("\n");
    msg.buttons = buttons;
    msg.text = text;
    if (notes) msg.notes = notes;
    if (changed || msg.versions.length === 0) msg.versions.push({ text, ...(notes ? { notes } : {}), at: Date.now() });
  }

  in(conversationId: string): FakeMessage[] {
    return this.messages.filter((m) => m.conversationId === conversationId);
  }
}

function parseButtons(raw: string | undefined): FakeButton[] {
  if (!raw) return [];
  const list = JSON.parse(raw) as unknown;
  if (!Array.isArray(list)) throw new Error("button variable is not a JSON list");
  return list.map((b: Partial<FakeButton>) => {
    if (typeof b.text !== "string" || typeof b.actionId !== "string") throw new Error("button without text/actionId");
    return { text: b.text, actionId: b.actionId, params: b.params ?? {} };
  });
}

/** DingTalk markdown → the text a reader sees (markers gone, list numbers and bullets kept). */
export function plain(markdown: string): string {
  return lexer(markdown)
    .map((t) => block(t))
    .filter((s) => s !== "")
    .join("\n")
    .replaceAll("\u00a0", " ");
}

function block(token: Token): string {
  const t = token as Tokens.Generic;
  if (t.type === "space" || t.type === "hr") return "";
  if (t.type === "code") return String(t.text);
  if (t.type === "list") {
    const list = t as Tokens.List;
    const start = typeof list.start === "number" ? list.start : 1;
    return list.items
      .map((item, i) => `${list.ordered ? `${start + i}.` : "•"} ${item.tokens.map((c) => block(c)).join("\n")}`)
      .join("\n");
  }
  if (t.type === "blockquote") return (t.tokens ?? []).map((c) => block(c)).join("\n");
  if (t.tokens) return inline(t.tokens);
  return String(t.text ?? t.raw ?? "");
}

function inline(tokens: Token[]): string {
  return tokens
    .map((t) => {
      const g = t as Tokens.Generic;
      if (g.type === "br") return "\n";
      if (g.type === "image") return String(g.text);
      if (g.tokens) return inline(g.tokens);
      return String(g.text ?? g.raw ?? "");
    })
    .join("")
    .replace(/ +\n/g, "\n");
}
