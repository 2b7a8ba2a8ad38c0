/**
 * The list of conversations, kept in this browser's localStorage (per page path): each has an id
 * the page made up and a title, named after its first message and renamable. Deleting one takes
 * it off the list; its agent thread stays on the server, unreachable from this browser.
 */
import { $, BASE, h, randomId } from "./dom.js";

const STORE_KEY = `antler-chat:${BASE}`;
const ID_RE = /^[A-Za-z0-9_-]{8,64}$/;
const NEW_TITLE = "New chat";

export const store = loadStore();

function loadStore() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORE_KEY) ?? "{}");
    const list = Array.isArray(saved.list) ? saved.list.filter((c) => ID_RE.test(c?.id ?? "")) : [];
    return { current: typeof saved.current === "string" ? saved.current : null, list };
  } catch {
    return { current: null, list: [] };
  }
}

export function saveStore() {
  localStorage.setItem(STORE_KEY, JSON.stringify(store));
}

/** Adds an untitled conversation at the top of the list; returns its id. */
export function newConversation() {
  const id = randomId();
  store.list.unshift({ id, title: NEW_TITLE });
  saveStore();
  return id;
}

/** Shows the list, `current` marked, each with Rename and Delete buttons. */
export function renderSidebar() {
  const current = store.current;
  const items = store.list.map((c) => {
    const link = h("a", { href: `#${c.id}`, textContent: c.title });
    link.dataset.id = c.id;
    if (c.id === current) link.setAttribute("aria-current", "page");
    const rename = h("button", { type: "button", className: "icon", textContent: "✎", title: "Rename" });
    rename.setAttribute("aria-label", `Rename ${c.title}`);
    rename.dataset.rename = c.id;
    const remove = h("button", { type: "button", className: "icon", textContent: "✕", title: "Delete" });
    remove.setAttribute("aria-label", `Delete ${c.title}`);
    remove.dataset.delete = c.id;
    return h("li", {}, link, rename, remove);
  });
  $("conversations").replaceChildren(...items);
  $("chat-heading").textContent = store.list.find((c) => c.id === current)?.title ?? NEW_TITLE;
}

/** Names an untitled conversation after its first user message (commands don't count). */
export function nameConversation(id, text) {
  const entry = store.list.find((c) => c.id === id);
  const line = text.trim().replace(/\s+/g, " ");
  if (!entry || entry.title !== NEW_TITLE || !line || line.startsWith("/")) return;
  entry.title = line.length > 40 ? `${line.slice(0, 40)}…` : line;
  saveStore();
  renderSidebar();
}

/** Turns a conversation's title into a text field; Enter or leaving it saves, Escape keeps the old name. */
export function renameConversation(id) {
  const entry = store.list.find((c) => c.id === id);
  const item = $("conversations").querySelector(`[data-rename="${id}"]`)?.parentElement;
  if (!entry || !item) return;
  const field = h("input", { type: "text", value: entry.title, maxLength: 80, className: "rename" });
  field.setAttribute("aria-label", "New name");
  let done = false;
  const finish = (save) => {
    if (done) return;
    done = true;
    const title = field.value.trim().replace(/\s+/g, " ");
    if (save && title) entry.title = title;
    saveStore();
    renderSidebar();
  };
  field.addEventListener("keydown", (event) => {
    if (event.key === "Enter") finish(true);
    if (event.key === "Escape") finish(false);
  });
  field.addEventListener("blur", () => finish(true));
  item.replaceChildren(field);
  field.focus();
  field.select();
}

/** Takes a conversation off the list once the user confirms; true when it was removed. */
export function deleteConversation(id) {
  const entry = store.list.find((c) => c.id === id);
  if (!entry || !confirm(`Delete "${entry.title}" from this list?`)) return false;
  store.list = store.list.filter((c) => c.id !== id);
  saveStore();
  renderSidebar();
  return true;
}
