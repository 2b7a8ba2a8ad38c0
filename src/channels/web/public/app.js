/**
 * The web chat page: plain ES modules (this one, dom.js, conversations.js, extras.js, progress.js), no
 * framework and no build step. It keeps the list of
 * conversations in localStorage, reads a conversation's history as JSON, follows its replies as
 * server-sent events, and posts messages and button clicks. The wire is in ../README.md.
 *
 * Every event handler is idempotent by message id, so a replay after a reconnect shows nothing twice.
 * While a reply streams the Stop button sends `/stop`; `/new` typed here opens a new conversation,
 * so the old one stays in the list. A banner says when the agent cannot answer (from /readyz).
 */

import {
  deleteConversation,
  nameConversation,
  newConversation,
  renameConversation,
  renderSidebar,
  saveStore,
  store,
} from "./conversations.js";
import { $, BASE, errorText, h, OFFLINE, randomId } from "./dom.js";
import { addCopyButton, attachments, checkAgent } from "./extras.js";
import { renderProgress } from "./progress.js";

let conv = null; // the open conversation's id
let source = null; // its EventSource
let seq = 0; // the last event id seen on it
let typingTimer = 0;
let busyTimer = 0;
let loaded = Promise.resolve(); // settles once the open conversation's history is shown
let replyTimer = 0; // hides the Stop button once a reply has been quiet for a while
/** How long a reply may be quiet before the page stops offering Stop. */
const REPLY_QUIET_MS = 4000;
const clock = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });

/** Calls the API; resolves {ok, status, data} (data is the JSON body or {}), rejects on a network error. */
async function api(method, path, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`${BASE}/api${path}`, init);
  const data = await res.json().catch(() => ({}));
  if (res.status === 401 && data.login) showLogin();
  return { ok: res.ok, status: res.status, data };
}

/** POSTs JSON; resolves null when the server took it, else the reason to show. */
async function post(path, body) {
  try {
    const res = await api("POST", path, body);
    return res.ok ? null : errorText(res);
  } catch {
    return OFFLINE;
  }
}

function show(section) {
  for (const id of ["login", "chat"]) $(id).hidden = id !== section;
  $("sidebar").hidden = section !== "chat";
}

function notice(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}

// --- Signing in -------------------------------------------------------------------------------

async function boot() {
  let res;
  try {
    res = await api("GET", "/session");
  } catch {
    return notice(`${OFFLINE} Reload the page to try again.`);
  }
  if (res.status === 401 && res.data.login) return;
  if (!res.ok) {
    show(null);
    return notice(errorText(res));
  }
  if (typeof res.data.maxFileBytes === "number") attachments.maxFileBytes = res.data.maxFileBytes;
  if (res.data.title) {
    $("app-title").textContent = res.data.title;
    document.title = res.data.title;
  }
  notice("");
  show("chat");
  checkAgent();
  const known = store.list.some((c) => c.id === store.current);
  openConversation(known ? store.current : newConversation());
}

function showLogin() {
  closeStream();
  show("login");
  $("login-token").focus();
}

$("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = $("login-error");
  error.textContent = "";
  try {
    const res = await api("POST", "/session", { token: $("login-token").value });
    if (res.ok) {
      $("login-token").value = "";
      return boot();
    }
    error.textContent = res.status === 401 ? "That token is wrong." : errorText(res);
  } catch {
    error.textContent = OFFLINE;
  }
});

// --- Conversations ----------------------------------------------------------------------------

$("conversations").addEventListener("click", (event) => {
  const rename = event.target.closest("button[data-rename]");
  if (rename) return renameConversation(rename.dataset.rename);
  const remove = event.target.closest("button[data-delete]");
  if (remove) {
    const id = remove.dataset.delete;
    if (deleteConversation(id) && id === conv) openConversation(store.list[0]?.id ?? newConversation());
    return;
  }
  const link = event.target.closest("a[data-id]");
  if (!link) return;
  event.preventDefault();
  openConversation(link.dataset.id);
  $("composer-text").focus();
});

$("new-chat").addEventListener("click", () => {
  openConversation(newConversation());
  $("composer-text").focus();
});

function closeStream() {
  source?.close();
  source = null;
  delete $("chat").dataset.stream;
}

/** Shows a conversation: its history, then its event stream from where the history ends. */
function openConversation(id) {
  loaded = loadConversation(id);
  return loaded;
}

async function loadConversation(id) {
  closeStream();
  conv = id;
  store.current = id;
  saveStore();
  renderSidebar();
  setTyping(0);
  setReplying(false);
  $("messages").replaceChildren();
  let res;
  try {
    res = await api("GET", `/conversations/${id}/history`);
  } catch {
    return notice(`The history could not be loaded. ${OFFLINE}`);
  }
  if (conv !== id) return; // another conversation was opened meanwhile
  if (!res.ok) return res.status === 401 ? undefined : notice(errorText(res));
  notice("");
  $("messages").replaceChildren();
  for (const m of res.data.messages ?? []) {
    if (m.role === "user") addUser(m.id, m.text, m.at);
    else upsertBot(m);
  }
  for (const waiting of res.data.waiting ?? (res.data.pending ? [res.data.pending] : [])) upsertBot(waiting);
  const firstUser = (res.data.messages ?? []).find((m) => m.role === "user");
  if (firstUser) nameConversation(id, firstUser.text);
  seq = res.data.seq ?? 0;
  openStream(id);
  scrollDown(true);
}

function openStream(id) {
  const es = new EventSource(`${BASE}/api/conversations/${id}/events?after=${seq}`);
  source = es;
  const on = (name, handle) =>
    es.addEventListener(name, (event) => {
      if (conv !== id) return;
      if (event.lastEventId) seq = Number(event.lastEventId);
      handle(JSON.parse(event.data));
    });
  const reply = (m) => {
    setTyping(0);
    upsertBot(m);
    setReplying(true);
  };
  on("message", reply);
  on("edit", reply);
  on("typing", (t) => {
    setTyping(t.ms);
    setReplying(true);
  });
  on("file", addFile);
  on("user", (m) => {
    if (!findMessage(m.id)) addUser(m.id, m.text, m.at);
  });
  on("reset", () => openConversation(id));
  // Tests and styles read whether replies can arrive: "open" or "connecting".
  es.addEventListener("open", () => {
    $("chat").dataset.stream = "open";
  });
  es.addEventListener("error", () => {
    if (source !== es) return;
    $("chat").dataset.stream = "connecting";
    // EventSource retries by itself unless the server refused the stream (e.g. signed out).
    if (es.readyState === EventSource.CLOSED) setTimeout(() => source === es && openConversation(id), 3000);
  });
}

// --- Messages ---------------------------------------------------------------------------------

function findMessage(id) {
  return [...$("messages").children].find((el) => el.dataset.id === id);
}

/** A message's frame: who wrote it and when (`at`, ms since epoch; now when the server names no time). */
function messageShell(id, role, who, at = Date.now()) {
  const when = new Date(at);
  const time = h("time", { dateTime: when.toISOString(), textContent: clock.format(when), title: when.toLocaleString() });
  const label = h("h3", { className: "who" }, `${who} `, time);
  const el = h("article", { className: `msg ${role}` }, label, h("div", { className: "body" }));
  el.dataset.id = id;
  el.dataset.role = role;
  return el;
}

function append(el) {
  const stick = nearBottom();
  $("messages").append(el);
  scrollDown(stick);
}

function addUser(id, text, at) {
  const el = messageShell(id, "user", "You", at);
  el.querySelector(".body").textContent = text;
  append(el);
}

/** Shows a bot message, or replaces the one with its id; `buttons` absent keeps the old ones. */
function upsertBot(m) {
  const stick = nearBottom();
  let el = findMessage(m.id);
  if (!el) {
    el = messageShell(m.id, "assistant", "Antler", m.at);
    $("messages").append(el);
  }
  const body = el.querySelector(".body");
  if (m.html !== undefined) body.innerHTML = m.html;
  else body.textContent = m.text ?? "";
  for (const pre of body.querySelectorAll("pre")) addCopyButton(pre);
  for (const a of body.querySelectorAll("a[href]")) {
    a.target = "_blank";
    a.rel = "noopener noreferrer";
  }
  if (m.questionId) el.dataset.questionId = m.questionId;
  // Each message and edit says what the panel shows now; none (history, a notice) means no panel.
  renderProgress(el, m.progress ?? null);
  if (Array.isArray(m.buttons)) renderButtons(el, m.buttons);
  else setButtonsDisabled(el, false);
  markBusy();
  scrollDown(stick);
  if (!$("banner").hidden) checkAgent(); // a reply may mean the agent answers now
}

function renderButtons(el, buttons) {
  el.querySelector(".buttons")?.remove();
  if (buttons.length === 0) return;
  const group = h("div", { className: "buttons", role: "group", ariaLabel: "Answers" });
  for (const b of buttons) {
    const button = h("button", { type: "button", textContent: b.label });
    button.addEventListener("click", () => clickButton(el, b.id));
    group.append(button);
  }
  el.append(group);
}

function setButtonsDisabled(el, disabled) {
  for (const button of el.querySelectorAll(".buttons button")) button.disabled = disabled;
}

async function clickButton(el, buttonId) {
  setButtonsDisabled(el, true);
  const body = { id: randomId(), messageId: el.dataset.id, questionId: el.dataset.questionId, buttonId };
  const failure = await post(`/conversations/${conv}/actions`, body);
  if (failure) {
    setButtonsDisabled(el, false);
    notice(`The answer was not sent: ${failure}`);
  }
}

function addFile(f) {
  if (findMessage(f.id)) return;
  const el = messageShell(f.id, "assistant", "Antler", f.at);
  const body = el.querySelector(".body");
  if (f.kind === "image") body.append(h("img", { src: f.url, alt: f.name }));
  const size = f.size ? ` (${Math.max(1, Math.round(f.size / 1024))} KB)` : "";
  body.append(h("a", { href: f.url, download: f.name, textContent: `Download ${f.name}${size}` }));
  append(el);
}

/** Shows "typing…" for `ms` (0 hides it); the status element announces it politely. */
function setTyping(ms) {
  clearTimeout(typingTimer);
  $("typing").textContent = ms > 0 ? "Antler is typing…" : "";
  if (ms > 0) typingTimer = setTimeout(() => setTyping(0), ms);
}

/** A streaming reply is announced once it settles, not at every edit. */
function markBusy() {
  $("messages").setAttribute("aria-busy", "true");
  clearTimeout(busyTimer);
  busyTimer = setTimeout(() => $("messages").removeAttribute("aria-busy"), 1000);
}

function nearBottom() {
  const log = $("messages");
  return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
}

function scrollDown(stick) {
  if (stick) $("messages").scrollTop = $("messages").scrollHeight;
}

// --- Sending ----------------------------------------------------------------------------------

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("composer-text").value;
  const files = attachments.list;
  if ((!text.trim() && files.length === 0) || !conv) return;
  $("composer-text").value = "";
  if (/^\/new\s*$/i.test(text.trim()) && files.length === 0) {
    // A new conversation beside this one, so this one stays reachable in the list.
    return openConversation(newConversation());
  }
  attachments.set([]);
  await loaded; // the history replaces the list: show the message after it
  const id = randomId();
  const shown = files.length ? `${text}${text ? "\n" : ""}${files.map((f) => `📎 ${f.name}`).join("\n")}` : text;
  addUser(id, shown);
  nameConversation(conv, text || files[0].name);
  send(
    conv,
    id,
    text,
    files.map((f) => f.id),
  );
});

$("stop").addEventListener("click", () => {
  if (!conv) return;
  const id = randomId();
  addUser(id, "/stop");
  send(conv, id, "/stop");
  setReplying(false);
});

/** Shows Stop while a reply is on its way: from a sent message until the reply has been quiet a while. */
function setReplying(on) {
  clearTimeout(replyTimer);
  $("stop").hidden = !on;
  if (on) replyTimer = setTimeout(() => setReplying(false), REPLY_QUIET_MS);
}

$("composer-text").addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  $("composer").requestSubmit();
});

$("composer-file").addEventListener("change", async (event) => {
  const picked = [...event.target.files];
  event.target.value = "";
  for (const file of picked) {
    const failure = conv ? await attachments.upload(conv, file) : "no conversation is open";
    notice(failure ? `${file.name} was not attached: ${failure}` : "");
  }
});

/** Posts a user message; a failure marks it "not sent" with a Retry that reuses its id. */
async function send(convId, id, text, files = []) {
  const el = findMessage(id);
  el?.querySelector(".status")?.remove();
  el?.classList.remove("failed");
  const failure = await post(`/conversations/${convId}/messages`, files.length ? { id, text, files } : { id, text });
  if (!failure) {
    if (text !== "/stop" && convId === conv) setReplying(true);
    return;
  }
  if (!el?.isConnected) return;
  el.classList.add("failed");
  const retry = h("button", { type: "button", textContent: "Retry" });
  retry.addEventListener("click", () => {
    $("composer-text").focus();
    send(convId, id, text, files);
  });
  const why = /^not sent/i.test(failure) ? failure : `Not sent: ${failure}`;
  el.append(h("p", { className: "status", textContent: `${why} ` }, retry));
}

boot();
