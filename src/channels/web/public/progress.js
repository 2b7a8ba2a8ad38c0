/**
 * The progress view under a bot message: what the agent is doing while it works. `compact` is
 * one line (the current step); `full` is a collapsible panel (<details>) whose summary line is the
 * current step and whose list holds each tool call, task, plan step or approval with its mark
 * (✓, ✗, ⏳, ☐, ⏸, ☑: the server names it) and how long it took. The model's reasoning, when the operator shows it, has its own collapsed
 * block. Once the run ended the panel folds to its summary ("3 tools, 41 s"), or goes when there
 * is none. Everything is set with textContent: the server sends no HTML for it.
 */
import { h } from "./dom.js";

/** Shows `progress` (the wire's PageProgress) under the message `el`, or takes the panel away when null. */
export function renderProgress(el, progress) {
  let panel = el.querySelector(":scope > .progress");
  if (!progress) {
    panel?.remove();
    return;
  }
  const ended = progress.headline === "";
  if (!panel) {
    panel = h("div", { className: "progress" });
    const buttons = el.querySelector(":scope > .buttons");
    if (buttons) el.insertBefore(panel, buttons);
    else el.append(panel);
  }
  const wasLive = panel.dataset.state === "live";
  panel.dataset.mode = progress.mode;
  panel.dataset.state = ended ? "ended" : "live";
  const title = `${ended ? "✓" : "⏳"} ${progress.headline || progress.summary || ""}`;
  const steps = progress.mode === "full" && progress.rows.length > 0 ? rowsPanel(panel, title, progress.rows) : null;
  if (steps) {
    // Open while the run goes, folded once it ended; a reader's own toggle is kept in between.
    if (!ended && !steps.dataset.shown) steps.open = true;
    if (wasLive && ended) steps.open = false;
    steps.dataset.shown = "1";
  } else {
    panel.querySelector(":scope > details.steps")?.remove();
    line(panel).textContent = title;
  }
  if (steps) panel.querySelector(":scope > .headline")?.remove();
  reasoning(panel, progress.reasoning);
}

/** The steps panel, made once and kept (so its open state stays), with its summary and rows set anew. */
function rowsPanel(panel, title, rows) {
  let steps = panel.querySelector(":scope > details.steps");
  if (!steps) {
    steps = h("details", { className: "steps" }, h("summary"), h("ul", { className: "rows" }));
    panel.prepend(steps);
  }
  steps.querySelector("summary").textContent = title;
  steps.querySelector("ul").replaceChildren(...rows.map(rowItem));
  return steps;
}

function rowItem(row) {
  const item = h(
    "li",
    {},
    h("span", { className: "icon", textContent: row.icon }),
    " ",
    h("span", { className: "title", textContent: row.title }),
  );
  item.dataset.state = row.state;
  item.dataset.kind = row.kind;
  if (row.detail) item.append(" ", h("span", { className: "detail", textContent: row.detail }));
  if (row.took) item.append(" ", h("span", { className: "took", textContent: row.took }));
  return item;
}

function line(panel) {
  let p = panel.querySelector(":scope > .headline");
  if (!p) {
    p = h("p", { className: "headline" });
    panel.prepend(p);
  }
  return p;
}

/** The reasoning block, collapsed unless the reader opened it; gone when there is none. */
function reasoning(panel, text) {
  let block = panel.querySelector(":scope > details.reasoning");
  if (!text) {
    block?.remove();
    return;
  }
  if (!block) {
    block = h("details", { className: "reasoning" }, h("summary", { textContent: "Reasoning" }), h("p"));
    panel.append(block);
  }
  block.querySelector("p").textContent = text;
}
