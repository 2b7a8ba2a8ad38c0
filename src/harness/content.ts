/** The content of the user's message as models read it: the text, then each image as a block. */
import type { RunImage } from "./types.js";

export type UserContent = string | Array<{ type: "text"; text: string } | { type: "image_url"; image_url: { url: string } }>;

/** Plain text without images; else OpenAI-style parts, which LangChain passes on to every provider it maps. */
export function userContent(text: string, images?: readonly RunImage[]): UserContent {
  if (!images || images.length === 0) return text;
  return [
    { type: "text", text },
    ...images.map((image) => ({ type: "image_url" as const, image_url: { url: `data:${image.mime};base64,${image.base64}` } })),
  ];
}
