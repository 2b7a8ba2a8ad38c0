/**
 * The chat page itself: its static files (`public/`: the page, its script, style and icon), read once at start with the page's
 * path put in, and the headers every page answer carries (a strict content security policy).
 */
import { readFile } from "node:fs/promises";
import { ChannelError, errorMessage } from "../../errors.js";
import { escapeHtml } from "./format.js";

export const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

export const ASSETS = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "conversations.js": "text/javascript; charset=utf-8",
  "extras.js": "text/javascript; charset=utf-8",
  "progress.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
} as const;
export type Asset = keyof typeof ASSETS;

/** The page's files, read once, with the page's path put in. */
export async function loadAssets(channel: string, base: string): Promise<Record<Asset, string>> {
  const dir = new URL("./public/", import.meta.url);
  const out = {} as Record<Asset, string>;
  for (const name of Object.keys(ASSETS) as Asset[]) {
    try {
      out[name] = (await readFile(new URL(name, dir), "utf8")).replaceAll("%BASE%", escapeHtml(base));
    } catch (err) {
      throw new ChannelError(
        channel,
        "config_missing",
        `the web chat's page file ${name} is missing from ${dir.pathname} (npm run build copies it there): ${errorMessage(err)}`,
      );
    }
  }
  return out;
}
