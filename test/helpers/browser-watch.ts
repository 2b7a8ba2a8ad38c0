/**
 * What the Chromium contract driver runs inside the chat page: a MutationObserver on the message
 * list that reports, after every change, each assistant message's id, its body's text as a person
 * reads it, and the labels of the buttons under it. It runs at every page load (an init script),
 * so a reload is watched too; it reports through a binding the driver exposes.
 */

/** One assistant message as the page shows it at one moment. */
export interface SeenMessage {
  id: string;
  text: string;
  buttons: string[];
}

/** One report: every assistant message on the page, and the page's clock when it was read. */
export interface SeenReport {
  at: number;
  messages: SeenMessage[];
}

/** The name of the binding the page reports to. */
export const SEEN_BINDING = "antlerDriverSaw";

/**
 * The page-side script. The text is the body's `innerText` (what is rendered, line breaks as laid
 * out), never the wire's Markdown or HTML. Buttons inside the body (a code block's Copy) are
 * controls, not text: a body holding one is read from a copy without them, laid out off screen
 * outside the watched list.
 */
export const WATCH_SCRIPT = `(() => {
  const readable = (body) => {
    if (!body.querySelector("button")) return body.innerText;
    const frame = document.createElement("article");
    frame.className = "msg assistant";
    frame.style.position = "fixed";
    frame.style.left = "-100000px";
    frame.style.top = "0";
    frame.style.width = body.clientWidth + "px";
    const copy = body.cloneNode(true);
    for (const b of copy.querySelectorAll("button")) b.remove();
    frame.append(copy);
    document.body.append(frame);
    const text = copy.innerText;
    frame.remove();
    return text;
  };
  const report = () => {
    const messages = [...document.querySelectorAll('#messages > [data-role="assistant"]')].map((el) => {
      const body = el.querySelector(".body");
      const buttons = [...el.querySelectorAll(":scope > .buttons button")].map((b) => b.textContent);
      return { id: el.dataset.id, text: body ? readable(body) : "", buttons };
    });
    window.${SEEN_BINDING}({ at: Date.now(), messages });
  };
  const start = () => {
    const log = document.getElementById("messages");
    if (!log) return;
    new MutationObserver(report).observe(log, { subtree: true, childList: true, characterData: true });
    report();
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();`;
