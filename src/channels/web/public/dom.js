/** What every part of the chat page uses: the page's base path, element helpers, ids and error words. */

export const BASE = document.querySelector('meta[name="antler-base"]')?.content ?? "";
export const OFFLINE = "The chat server cannot be reached.";
export const $ = (id) => document.getElementById(id);

/** A new element with properties and children. */
export function h(tag, props = {}, ...children) {
  const el = Object.assign(document.createElement(tag), props);
  el.append(...children);
  return el;
}

/** A random id for conversations and messages: 16 bytes, base64url (22 characters). */
export function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** What to tell the user about a failed API answer ({status, data}). */
export function errorText(res) {
  if (res.data?.error) return res.data.error;
  if (res.status === 503) return "The gateway is starting or stopping; try again in a moment.";
  return `The server answered ${res.status}.`;
}
