/**
 * The chat page's smaller parts: the Copy button on code blocks, the files attached to the next
 * message (uploaded one by one before it is sent), and the banner shown while the agent cannot
 * answer (read from the server's open `/readyz`).
 */
import { $, BASE, errorText, h, OFFLINE } from "./dom.js";

/** A Copy button on a code block: copies the code's text, and says so for a moment. */
export function addCopyButton(pre) {
  const button = h("button", { type: "button", className: "copy", textContent: "Copy" });
  button.setAttribute("aria-label", "Copy code");
  button.addEventListener("click", async () => {
    const code = pre.querySelector("code")?.textContent ?? pre.textContent;
    try {
      await navigator.clipboard.writeText(code);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => {
      button.textContent = "Copy";
    }, 1500);
  });
  pre.prepend(button);
}

/** The files picked for the next message: `{id, name, size}`, `id` an upload id or `{name, size, mime}`. */
export const attachments = {
  list: [],
  /** `media.max_file_mb` in bytes, from the session. */
  maxFileBytes: Number.POSITIVE_INFINITY,

  /** Uploads one file to conversation `conv`; resolves null once it is attached, else the reason. */
  async upload(conv, file) {
    if (file.size > this.maxFileBytes) {
      // Not uploaded: the message names it, and the agent's side answers that it is over the limit.
      const named = { name: file.name, size: file.size, mime: file.type || "application/octet-stream" };
      this.set([...this.list, { id: named, name: file.name, size: file.size }]);
      return null;
    }
    try {
      const res = await fetch(`${BASE}/api/conversations/${conv}/uploads`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": file.type || "application/octet-stream", "x-file-name": encodeURIComponent(file.name) },
        body: file,
      });
      const data = await res.json().catch(() => ({}));
      if (!res.ok) return errorText({ status: res.status, data });
      this.set([...this.list, { id: data.id, name: file.name, size: file.size }]);
      return null;
    } catch {
      return OFFLINE;
    }
  },

  /** Replaces the list and shows it as chips, each with a button that takes it off. */
  set(list) {
    this.list = list;
    const chips = list.map((f) => {
      const remove = h("button", { type: "button", className: "icon", textContent: "✕" });
      remove.setAttribute("aria-label", `Remove ${f.name}`);
      remove.addEventListener("click", () => this.set(this.list.filter((a) => a !== f)));
      return h("span", { className: "chip" }, `📎 ${f.name} `, remove);
    });
    $("attached").replaceChildren(...chips);
    $("attached").hidden = list.length === 0;
  },
};

let bannerTimer = 0;

/** Asks /readyz whether the default agent can answer; shows a banner, checked again every 5 s, until it can. */
export async function checkAgent() {
  clearTimeout(bannerTimer);
  let agent = null;
  try {
    const res = await fetch("/readyz", { credentials: "same-origin" });
    agent = (await res.json().catch(() => ({}))).agent ?? null;
  } catch {
    agent = null;
  }
  const down = agent && !agent.reachable;
  $("banner").hidden = !down;
  if (!down) return;
  $("banner").textContent = bannerText(agent);
  bannerTimer = setTimeout(checkAgent, 5000);
}

/** What the banner says: what cannot answer, why, and what to set. */
function bannerText(agent) {
  const problem = agent.problem ? ` (${agent.problem})` : "";
  if (agent.backend === "remote")
    return `The agent server cannot answer yet${problem}. Check the agent's url in the config, and that the server runs.`;
  if (agent.backend === "graph") return `The agent graph cannot answer yet${problem}. Check its log lines.`;
  // The gateway's own words name the key to set when the page may read them (from this machine).
  if (/base_url/.test(agent.problem ?? "")) return `No model answers yet: ${agent.problem}`;
  return `No model answers yet${problem}. Set models[].base_url and api_key in the config (or OPENAI_BASE_URL and OPENAI_API_KEY), then restart Antler.`;
}
