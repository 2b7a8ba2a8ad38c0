/**
 * What Discord refuses in a message body, with its JSON error codes: content over 2000
 * characters and malformed components are 50035 (Invalid Form Body, with a nested `errors`
 * tree naming the field), a message with nothing to show is 50006.
 */
import type { Json } from "./world.js";

export const CONTENT_MAX = 2000;

/** A refusal in Discord's shape: HTTP status plus `{ code, message, errors? }`. */
export class DiscordApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: Json,
  ) {
    super(message);
  }

  get body(): Json {
    return { message: this.message, code: this.code, ...(this.errors ? { errors: this.errors } : {}) };
  }
}

export const unknownChannel = () => new DiscordApiError(404, 10003, "Unknown Channel");
export const unknownMessage = () => new DiscordApiError(404, 10008, "Unknown Message");

/** 50035 with the offending field at `path`, as Discord nests it. */
export function invalidForm(path: Array<string | number>, code: string, message: string): DiscordApiError {
  let errors: Json = { _errors: [{ code, message }] };
  for (const key of [...path].reverse()) errors = { [String(key)]: errors };
  return new DiscordApiError(400, 50035, "Invalid Form Body", errors);
}

export interface MessageFields {
  content?: string;
  components?: Json[];
  flags?: number;
}

/** Reads and checks the message fields of a create or edit body. */
export function messageFields(body: Json): MessageFields {
  const out: MessageFields = {};
  if (body.content !== undefined && body.content !== null) {
    if (typeof body.content !== "string") throw invalidForm(["content"], "STRING_TYPE_CONVERT", "Could not interpret as string.");
    if ([...body.content].length > CONTENT_MAX) {
      throw invalidForm(["content"], "BASE_TYPE_MAX_LENGTH", `Must be ${CONTENT_MAX} or fewer in length.`);
    }
    out.content = body.content;
  }
  if (body.components !== undefined && body.components !== null) out.components = checkComponents(body.components);
  if (typeof body.flags === "number") out.flags = body.flags;
  return out;
}

/** A message must show something: text, components, embeds, files, stickers or a poll. */
export function assertNotEmpty(content: string, components: Json[], body: Json = {}): void {
  const extra = ["embeds", "attachments", "sticker_ids", "files"].some((k) => Array.isArray(body[k]) && body[k].length > 0);
  if (content.trim() === "" && components.length === 0 && !extra && !body.poll) {
    throw new DiscordApiError(400, 50006, "Cannot send an empty message");
  }
}

const badLength = (path: Array<string | number>, min: number, max: number) =>
  invalidForm(path, "BASE_TYPE_BAD_LENGTH", `Must be between ${min} and ${max} in length.`);

/** Action rows (type 1) of buttons (type 2) or one select menu, as Discord allows them. */
function checkComponents(value: unknown): Json[] {
  if (!Array.isArray(value)) throw invalidForm(["components"], "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType");
  if (value.length > 5) throw badLength(["components"], 0, 5);
  const ids = new Set<string>();
  value.forEach((row: Json, r) => {
    if (row?.type !== 1)
      throw invalidForm(["components", r, "type"], "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).');
    const children = row.components;
    if (!Array.isArray(children) || children.length < 1 || children.length > 5) {
      throw badLength(["components", r, "components"], 1, 5);
    }
    const selects = children.filter((c: Json) => c?.type !== 2).length;
    if (selects > 0 && children.length > 1) {
      throw invalidForm(
        ["components", r, "components"],
        "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
        "The specified component exceeds the maximum width",
      );
    }
    children.forEach((c: Json, i) => {
      checkChild(c, ["components", r, "components", i], ids);
    });
  });
  return value as Json[];
}

function checkChild(c: Json, path: Array<string | number>, ids: Set<string>): void {
  const isLink = c.type === 2 && c.style === 5;
  if (c.type === 2) {
    if (typeof c.style !== "number" || c.style < 1 || c.style > 6) {
      throw invalidForm([...path, "style"], "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4, 5, 6}.");
    }
    if (c.label !== undefined && (typeof c.label !== "string" || [...c.label].length > 80))
      throw badLength([...path, "label"], 0, 80);
    if (!c.label && !c.emoji)
      throw invalidForm([...path], "BUTTON_COMPONENT_REQUIRES_LABEL_OR_EMOJI", "A label or emoji is required");
    if (isLink) {
      if (typeof c.url !== "string" || !/^(https?|discord):\/\//.test(c.url)) {
        throw invalidForm([...path, "url"], "URL_TYPE_INVALID_URL", "Not a well formed URL.");
      }
      if (c.custom_id !== undefined) {
        throw invalidForm([...path, "custom_id"], "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED", "A custom id is not allowed");
      }
      return;
    }
  } else if (![3, 5, 6, 7, 8].includes(Number(c.type))) {
    throw invalidForm([...path, "type"], "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (2, 3, 5, 6, 7, 8).');
  }
  const id = c.custom_id;
  if (typeof id !== "string" || id.length < 1 || id.length > 100) throw badLength([...path, "custom_id"], 1, 100);
  if (ids.has(id))
    throw invalidForm([...path, "custom_id"], "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated");
  ids.add(id);
}

/** Labels of the buttons a message shows, row by row. */
export function buttonLabels(components: Json[]): string[] {
  return components.flatMap((row) =>
    ((row.components as Json[] | undefined) ?? []).filter((c) => c.type === 2).map((c) => String(c.label ?? "")),
  );
}

/** The button labelled `label`, if a message shows one. */
export function findButton(components: Json[], label: string): Json | undefined {
  for (const row of components) {
    const hit = ((row.components as Json[] | undefined) ?? []).find((c) => c.type === 2 && c.label === label);
    if (hit) return hit;
  }
  return undefined;
}
