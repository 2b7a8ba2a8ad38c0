/**
 * How Feishu's client turns a file a user sends into a message: a lone photo is an `image`
 * message; a photo with text (or an @mention) is a `post` whose first paragraph holds the
 * image; a document is a `file` and a voice note an `audio` message, neither of which can carry
 * text or mentions. The bytes are stored under a new key for the resource API.
 */
import { store } from "./files.js";
import type { Sender } from "./index.js";
import type { FeishuWorld } from "./state.js";

export interface FakeMention {
  key: string;
  id: { open_id: string; union_id: string; user_id: string };
  name: string;
  tenant_key: string;
}

export interface UserFileMessage extends Sender {
  kind: "image" | "file" | "audio";
  name: string;
  mime: string;
  data: Uint8Array;
  /** Text sent with a photo. */
  caption?: string;
  /** Mention the bot (only a photo's post can). */
  mentionBot?: boolean;
  /** A voice note's length; 1 s by default. */
  durationMs?: number;
}

export interface ComposedMessage {
  msgType: "image" | "post" | "file" | "audio";
  content: string;
  mentions: FakeMention[];
  /** What a person reads. */
  text: string;
}

export function composeFile(world: FeishuWorld, input: UserFileMessage, mentions: FakeMention[]): ComposedMessage {
  const data = Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength);
  if (input.kind === "image") {
    const { key } = store(world, { kind: "image", data, mime: input.mime, by: "user" });
    if (!input.caption && !mentions.length)
      return { msgType: "image", content: JSON.stringify({ image_key: key }), mentions, text: "" };
    const line = [
      ...mentions.map((m) => ({ tag: "at", user_id: m.key, user_name: m.name })),
      { tag: "text", text: `${mentions.length ? " " : ""}${input.caption ?? ""}` },
    ];
    const content = JSON.stringify({ title: "", content: [[{ tag: "img", image_key: key, width: 64, height: 64 }], line] });
    const text = `${mentions.map((m) => `@${m.name} `).join("")}${input.caption ?? ""}`;
    return { msgType: "post", content, mentions, text };
  }
  if (input.caption || mentions.length) throw new Error(`a Feishu ${input.kind} message carries no text or mentions`);
  const { key } = store(world, { kind: "file", data, name: input.name, mime: input.mime, by: "user" });
  if (input.kind === "audio") {
    const content = JSON.stringify({ file_key: key, duration: input.durationMs ?? 1000 });
    return { msgType: "audio", content, mentions, text: "" };
  }
  return { msgType: "file", content: JSON.stringify({ file_key: key, file_name: input.name }), mentions, text: "" };
}
