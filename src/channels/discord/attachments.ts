/**
 * Inbound attachments on Discord: a message's attachments as the core sees them, each with the
 * signed CDN link and the ids that find it again once that link has expired (`source`). A voice
 * message is audio by its flag; without a content type, the extension decides the kind.
 */
import type { Attachment, Message } from "discord.js";
import { MessageFlags } from "discord.js";
import type { AttachmentKind, InboundAttachment } from "../types.js";

/** What `download` needs, as stored in `attachment.source`. */
export interface DiscordFileSource {
  /** The attachment's signed CDN link (`attachment.url`). */
  url: string;
  /** Attachment id: finds the attachment again in its message when the link has expired. */
  id: string;
  /** Channel (or thread) and message the attachment came in. */
  channelId: string;
  messageId: string;
}

const IMAGE_EXT = /\.(png|jpe?g|gif|webp|avif|heic)$/i;
const AUDIO_EXT = /\.(ogg|oga|opus|mp3|m4a|wav|flac|aac)$/i;

/** The attachments of a message as the core sees them; empty when it has none. */
export function attachmentsOf(message: Message): InboundAttachment[] {
  const voice = message.flags.has(MessageFlags.IsVoiceMessage);
  return message.attachments.map((a) => toAttachment(a, voice, message));
}

function toAttachment(a: Attachment, voice: boolean, message: Message): InboundAttachment {
  // A voice message is Opus in Ogg; its content type is there in practice, but the flag is what says "voice".
  const mime = a.contentType ?? (voice ? "audio/ogg" : undefined);
  const kind = kindOf(voice, mime, a.name);
  const source: DiscordFileSource = { url: a.url, id: a.id, channelId: message.channelId, messageId: message.id };
  return {
    kind,
    name: a.name || madeUpName(kind, mime),
    ...(mime ? { mime } : {}),
    size: a.size,
    source: { ...source },
  };
}

function kindOf(voice: boolean, mime: string | undefined, name: string): AttachmentKind {
  if (voice) return "audio";
  const type = mime?.toLowerCase();
  if (type) return type.startsWith("image/") ? "image" : type.startsWith("audio/") ? "audio" : "file";
  // Without a content type the extension is all there is to go by.
  return IMAGE_EXT.test(name) ? "image" : AUDIO_EXT.test(name) ? "audio" : "file";
}

function madeUpName(kind: AttachmentKind, mime: string | undefined): string {
  const sub = mime?.split(";")[0]?.split("/")[1]?.trim();
  const ext = sub && /^[a-z0-9.+-]{1,10}$/i.test(sub) ? sub.replace(/^jpeg$/i, "jpg") : undefined;
  if (kind === "image") return `image.${ext ?? "png"}`;
  if (kind === "audio") return `voice-message.${ext ?? "ogg"}`;
  return ext ? `file.${ext}` : "file";
}
