/**
 * Inbound attachments on Slack: the `files` of a message event become InboundAttachments, each
 * with the id (and, where the event has it, the private URL) that `download` reads it by. See
 * README.md, "Files, images and voice".
 */
import type { AttachmentKind, InboundAttachment } from "../types.js";

/** The parts of a Slack file object the adapter reads. */
export interface SlackFile {
  id?: string;
  name?: string;
  title?: string;
  mimetype?: string;
  filetype?: string;
  /** `slack_audio` for a voice clip recorded in Slack, `slack_video` for a video clip. */
  subtype?: string;
  size?: number;
  /** `hosted`, `external`, `snippet`, `tombstone` (deleted), `hidden_by_limit`, … */
  mode?: string;
  is_external?: boolean;
  /** `check_file_info` when the event left the file's details out (Slack Connect). */
  file_access?: string;
  url_private?: string;
  url_private_download?: string;
}

/** Files the adapter cannot fetch: deleted ones, ones the plan hides, and links to other services. */
function readable(file: SlackFile): file is SlackFile & { id: string } {
  if (typeof file.id !== "string" || file.id === "") return false;
  if (file.mode === "tombstone" || file.mode === "hidden_by_limit") return false;
  return file.is_external !== true && file.mode !== "external";
}

function kindOf(file: SlackFile): AttachmentKind {
  const mime = file.mimetype ?? "";
  if (file.subtype === "slack_audio" || mime.startsWith("audio/")) return "audio";
  if (mime.startsWith("image/")) return "image";
  return "file";
}

const MADE_UP_STEM: Record<AttachmentKind, string> = { image: "photo", audio: "voice", file: "file" };
const MADE_UP_EXT: Record<AttachmentKind, string> = { image: "jpg", audio: "webm", file: "bin" };

/** The file name as shared, else one made from the kind and Slack's `filetype`. */
function nameOf(file: SlackFile, kind: AttachmentKind): string {
  const name = file.name?.trim();
  if (name) return name;
  const ext = /^[a-z0-9]{1,10}$/i.test(file.filetype ?? "") ? file.filetype : MADE_UP_EXT[kind];
  return `${MADE_UP_STEM[kind]}.${ext}`;
}

/** InboundAttachments for the readable `files` of an event, in Slack's order. */
export function attachmentsOf(files: SlackFile[] | undefined): InboundAttachment[] {
  if (!Array.isArray(files)) return [];
  return files.filter(readable).map((file) => {
    const kind = kindOf(file);
    const url = file.url_private_download ?? file.url_private;
    // Without a URL in the event (file_access: check_file_info) download asks files.info for one.
    const source: InboundAttachment["source"] = { id: file.id };
    if (url && file.file_access !== "check_file_info") source.url = url;
    return {
      kind,
      name: nameOf(file, kind),
      ...(file.mimetype ? { mime: file.mimetype } : {}),
      ...(typeof file.size === "number" && file.size >= 0 ? { size: file.size } : {}),
      source,
    };
  });
}
