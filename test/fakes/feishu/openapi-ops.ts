/** The message and CardKit operations of the fake Open Platform, with Feishu's checks. */
import { applyElementOp, type ElementOp } from "./card-elements.js";
import {
  type CardJson,
  cardButtons,
  cardNotes,
  cardProblem,
  cardText,
  type FakeCard,
  type FakeMessage,
  messageText,
} from "./model.js";
import { type FeishuWorld, LIMITS, UUID_WINDOW_MS } from "./state.js";

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** A binary answer (a file download) instead of the JSON `body`; `chunked` leaves out Content-Length. */
  raw?: { data: Buffer; contentType: string; chunked?: boolean };
}

export function ok(extra: Record<string, unknown> = {}, wrapData = true): Reply {
  if (!wrapData || "data" in extra) return { status: 200, body: { code: 0, msg: "success", ...extra } };
  return { status: 200, body: { code: 0, msg: "success", data: extra } };
}

const fail = (code: number, msg: string, status = 400): Reply => ({ status, body: { code, msg } });
const rateLimited = (): Reply => ({
  status: 429,
  body: { code: 99991400, msg: "request trigger frequency limit" },
  headers: { "x-ogw-ratelimit-reset": "1" },
});

interface View {
  text: string;
  buttons: FakeMessage["buttons"];
  /** A card's secondary sections (model.ts `cardNotes`). */
  notes?: string[];
  card?: CardJson;
  cardId?: string;
}

/** What a person sees of a card. */
function seen(card: CardJson): Pick<View, "text" | "buttons" | "notes"> {
  return { text: cardText(card), buttons: cardButtons(card), notes: cardNotes(card) };
}

/** Parses message content the way the platform does; a string is the refusal. */
function view(world: FeishuWorld, msgType: unknown, content: unknown): View | Reply {
  if (typeof content !== "string") return fail(230001, "content must be a JSON string");
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(content) as Record<string, unknown>;
  } catch {
    return fail(230001, "content is not valid JSON");
  }
  if (msgType === "text" || msgType === "post") {
    if (Buffer.byteLength(content) > 150 * 1024) return fail(230025, "message content is too long");
    const text = messageText(msgType, content);
    if (!text.trim()) return fail(230001, "text must not be empty");
    return { text, buttons: [] };
  }
  if (msgType === "image" || msgType === "file") {
    // Only keys uploaded to this app; the message shows the image or the file's card, no text.
    const key = msgType === "image" ? parsed.image_key : parsed.file_key;
    const file = typeof key === "string" ? world.files.get(key) : undefined;
    if (!file || file.kind !== msgType) return fail(230001, `invalid ${msgType}_key ${String(key)}`);
    return { text: "", buttons: [] };
  }
  if (msgType !== "interactive") return fail(230001, `unsupported msg_type ${String(msgType)}`);
  if (parsed.type === "card") {
    const cardId = (parsed.data as { card_id?: unknown } | undefined)?.card_id;
    const card = typeof cardId === "string" ? world.cards.get(cardId) : undefined;
    if (!card) return fail(300300, "card_id does not exist");
    if (card.messageId) return fail(300301, "a card entity can be sent only once");
    return { ...seen(card.card), cardId: card.id };
  }
  if (Buffer.byteLength(content) > LIMITS.cardBytes) return fail(230025, "card content exceeds 30 KB");
  const problem = cardProblem(parsed);
  if (problem) return fail(230099, `Failed to create card content: ${problem}`);
  const card = parsed as CardJson;
  return { ...seen(card), card };
}

const isReply = (v: View | CardJson | Reply): v is Reply => "status" in v && "body" in v;

export function applyMessageOp(world: FeishuWorld, op: string, params: string[], url: URL, body: Record<string, unknown>): Reply {
  const now = Date.now();
  if (op === "send" || op === "reply") return postMessage(world, op, params, url, body, now);
  const message = world.message(params[0] ?? "");
  if (!message) return fail(230011, "message not found or recalled");
  if (op === "patch") return patchMessage(world, message, body, now);
  if (op === "update") {
    if (message.from !== "bot" || (message.msgType !== "text" && message.msgType !== "post")) {
      return fail(230001, "only text and post messages can be edited");
    }
    if (message.edits >= LIMITS.textEdits) return fail(230072, "the message has reached its edit limit");
    const v = view(world, body.msg_type, body.content);
    if (isReply(v)) return v;
    message.edits += 1;
    message.content = String(body.content);
    show(message, { text: v.text, buttons: [] }, now);
    return ok();
  }
  if (op === "reaction") {
    const emoji = (body.reaction_type as { emoji_type?: unknown } | undefined)?.emoji_type;
    if (typeof emoji !== "string" || !emoji) return fail(231001, "reaction_type.emoji_type is required");
    const reaction = { id: world.id("rc_"), emoji };
    message.reactions.push(reaction);
    return ok({ reaction_id: reaction.id, reaction_type: { emoji_type: emoji } });
  }
  if (op === "reaction_delete") {
    const i = message.reactions.findIndex((r) => r.id === params[1]);
    if (i < 0) return fail(231003, "reaction not found");
    message.reactions.splice(i, 1);
    return ok();
  }
  return fail(404, `unhandled op ${op}`, 404);
}

/** send (to a chat) or reply (to a message, in its topic when asked). */
function postMessage(
  world: FeishuWorld,
  op: string,
  params: string[],
  url: URL,
  body: Record<string, unknown>,
  now: number,
): Reply {
  const parent = op === "reply" ? world.message(params[0] ?? "") : undefined;
  if (op === "reply" && !parent) return fail(230011, "the message to reply to was not found or was recalled");
  const uuid = body.uuid;
  if (uuid !== undefined && (typeof uuid !== "string" || uuid.length > 50))
    return fail(230001, "uuid must be at most 50 characters");
  const first = typeof uuid === "string" ? world.uuids.get(uuid) : undefined;
  const repeated = first && now - first.at < UUID_WINDOW_MS ? world.message(first.messageId) : undefined;
  if (repeated) return sent(world, repeated);
  const target = parent ? { chatId: parent.chatId } : receiver(world, url, body);
  if ("status" in target) return target;
  const { chatId } = target;
  const chat = world.chats.get(chatId);
  if (!chat?.botMember) return fail(230002, "The bot can not be outside the group.");
  if (chat.status !== "normal") return fail(230045, "The chat not exist.");
  if (world.overLimit(`send:${chatId}`, LIMITS.sendPerSecondPerChat, now)) return rateLimited();
  const v = view(world, body.msg_type, body.content);
  if (isReply(v)) return v;
  const rootId = parent ? (parent.rootId ?? parent.id) : undefined;
  const message: FakeMessage = {
    id: world.id("om_"),
    chatId,
    chatType: chat.type,
    inThread: parent ? body.reply_in_thread === true || parent.inThread : false,
    from: "bot",
    senderOpenId: world.options.botOpenId,
    msgType: String(body.msg_type),
    content: String(body.content),
    text: v.text,
    buttons: v.buttons,
    ...(v.notes ? { notes: v.notes } : {}),
    versions: [{ text: v.text, ...(v.notes ? { notes: v.notes } : {}), at: now }],
    edits: 0,
    reactions: [],
    createdAt: now,
  };
  if (rootId) message.rootId = rootId;
  if (parent) message.parentId = parent.id;
  if (v.card) message.card = v.card;
  if (v.cardId) {
    message.cardId = v.cardId;
    (world.cards.get(v.cardId) as FakeCard).messageId = message.id;
  }
  world.messages.push(message);
  if (typeof uuid === "string") world.uuids.set(uuid, { messageId: message.id, at: now });
  return sent(world, message);
}

/** The answer to a send: the message as Feishu describes it, its sender's tenant included. */
function sent(world: FeishuWorld, m: FakeMessage): Reply {
  const sender = { id: world.options.appId, id_type: "app_id", sender_type: "app", tenant_key: world.options.tenantKey };
  return ok({ message_id: m.id, root_id: m.rootId, chat_id: m.chatId, msg_type: m.msgType, sender });
}

/** The chat a new message goes to: a chat_id, or the p2p chat with an open_id (opened if need be). */
function receiver(world: FeishuWorld, url: URL, body: Record<string, unknown>): { chatId: string } | Reply {
  const type = url.searchParams.get("receive_id_type");
  const id = String(body.receive_id ?? "");
  if (type === "chat_id") return { chatId: id };
  if (type !== "open_id") return fail(230001, "receive_id_type must be chat_id or open_id");
  const person = world.people.get(id);
  if (!person) return fail(230001, "Your request contains an invalid request parameter, ext=invalid receive_id.");
  if (!person.available) return fail(230013, "Bot has NO availability to this user.");
  return { chatId: world.p2pChatOf(id) };
}

/** `GET /im/v1/chats/:id`: a chat the bot is not in shows only its name and status. */
export function chatInfo(world: FeishuWorld, chatId: string): Reply {
  const chat = world.chats.get(chatId);
  if (!chat) return fail(232006, "Your request specifies a chat_id which is invalid.");
  const basic = { name: `chat ${chat.id}`, avatar: "", user_count: "2", chat_status: chat.status };
  if (!chat.botMember) return ok(basic);
  return ok({ ...basic, chat_mode: chat.type, chat_type: "private", tenant_key: world.options.tenantKey, external: false });
}

function patchMessage(world: FeishuWorld, message: FakeMessage, body: Record<string, unknown>, now: number): Reply {
  if (message.from !== "bot" || message.msgType !== "interactive") return fail(230001, "only the bot's cards can be updated");
  if (world.overLimit(`patch:${message.id}`, LIMITS.patchPerSecond, now)) return rateLimited();
  // Cards sent by card_id are CardKit entities: message PATCH silently does nothing to them.
  if (message.cardId) return ok();
  if (message.card?.config?.update_multi !== true) return fail(230099, "only cards with config.update_multi can be updated");
  const v = view(world, "interactive", body.content);
  if (isReply(v)) return v;
  if (v.cardId) return fail(230001, "cannot PATCH a message into a card entity");
  message.card = v.card as CardJson;
  message.content = String(body.content);
  show(message, v, now);
  return ok();
}

export function applyCardOp(world: FeishuWorld, op: string, params: string[], body: Record<string, unknown>): Reply {
  const now = Date.now();
  if (op === "card_create") {
    const parsed = parseCardJson(body.type, body.data);
    if (isReply(parsed)) return parsed;
    const card: FakeCard = { id: world.id("7c"), card: parsed, sequence: 0, ops: [], sequences: [] };
    world.cards.set(card.id, card);
    return ok({ card_id: card.id });
  }
  const card = world.cards.get(params[0] ?? "");
  if (!card) return fail(300300, "card not found");
  if (world.overLimit(`card:${card.id}`, LIMITS.cardOpsPerSecond, now)) return rateLimited();
  const sequence = body.sequence;
  if (typeof sequence !== "number" || !Number.isInteger(sequence) || sequence <= card.sequence) {
    return fail(300317, `sequence number compare failed (got ${String(sequence)}, last ${card.sequence})`);
  }
  if (op === "card_content") {
    if (card.card.config?.streaming_mode !== true) return fail(300309, "streaming mode is closed");
    const element = (card.card.body?.elements ?? []).find((e) => e.element_id === params[1]);
    if (!element || (element.tag !== "markdown" && element.tag !== "plain_text")) return fail(300302, "element not found");
    if (typeof body.content !== "string") return fail(300303, "content is required");
    if (body.content.length > LIMITS.elementChars) return fail(300305, "content exceeds 100000 characters");
    element.content = body.content;
  } else if (op === "element_create" || op === "element_update" || op === "element_delete") {
    const failure = applyElementOp(card.card, op as ElementOp, params[1], body);
    if (failure) return fail(failure.code, failure.msg);
  } else if (op === "card_settings") {
    let settings: { config?: Record<string, unknown> };
    try {
      settings = JSON.parse(String(body.settings)) as typeof settings;
    } catch {
      return fail(300303, "settings must be a JSON string");
    }
    card.card.config = { ...card.card.config, ...(settings.config ?? {}) };
  } else {
    const wrapped = body.card as { type?: unknown; data?: unknown } | undefined;
    const parsed = parseCardJson(wrapped?.type, wrapped?.data);
    if (isReply(parsed)) return parsed;
    card.card = parsed;
  }
  card.sequence = sequence;
  card.sequences.push(sequence);
  const message = card.messageId ? world.message(card.messageId) : undefined;
  if (message) show(message, seen(card.card), now);
  return ok();
}

function parseCardJson(type: unknown, data: unknown): CardJson | Reply {
  if (type !== "card_json" || typeof data !== "string")
    return fail(300303, 'type must be "card_json" with data as a JSON string');
  if (Buffer.byteLength(data) > LIMITS.cardBytes) return fail(300304, "card exceeds 30 KB");
  let card: unknown;
  try {
    card = JSON.parse(data);
  } catch {
    return fail(300303, "card data is not JSON");
  }
  const problem = cardProblem(card);
  return problem ? fail(300303, problem) : (card as CardJson);
}

/** Updates what users see and keeps every version that differs from the one before. */
function show(message: FakeMessage, view: Pick<View, "text" | "buttons" | "notes">, at: number): void {
  const { text, buttons, notes } = view;
  message.text = text;
  message.buttons = buttons;
  if (notes) message.notes = notes;
  else delete message.notes;
  const last = message.versions.at(-1);
  if (last?.text === text && (last.notes ?? []).join("\n") === (notes ?? []).join("\n")) return;
  message.versions.push({ text, ...(notes ? { notes } : {}), at });
}
