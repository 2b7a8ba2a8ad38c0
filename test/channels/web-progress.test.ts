/**
 * The progress view on the web chat's wire: the channel shows it itself (`progressView`), so each
 * send and edit carries it beside the text, and the page (here its wire-level fake) keeps a panel
 * under the message that follows the run and folds to its summary, or goes, at the end.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Channel, ConversationRef } from "../../src/channels/types.js";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { newConversationId, WebBrowser } from "../fakes/web/client.js";
import type { ChatTab } from "../fakes/web/tab.js";
import { threeToolRun } from "../helpers/progress-run.js";

let gw: TestGateway | undefined;
const tabs: ChatTab[] = [];

afterEach(async () => {
  for (const tab of tabs.splice(0)) await tab.close();
  await gw?.stop();
  gw = undefined;
});

async function openConversation(): Promise<{ web: Channel; tab: ChatTab; ref: ConversationRef }> {
  gw = await startTestGateway({ channels: { web: { enabled: true, edit_interval_ms: 50 } } });
  const web = gw.gateway.slot("web")?.channel as Channel;
  const browser = new WebBrowser(`http://127.0.0.1:${gw.port}/chat`);
  const conv = newConversationId();
  const tab = browser.tab(conv);
  tabs.push(tab);
  await tab.open();
  const ref = await web.resolveTarget?.({ chat: `${await browser.clientId()}/${conv}` });
  if (!ref) throw new Error("no ref");
  return { web, tab, ref };
}

/** Sends the first step, edits through the rest; returns the page's message. */
async function playRun(web: Channel, tab: ChatTab, ref: ConversationRef, steps: ReturnType<typeof threeToolRun>) {
  const [first, ...rest] = steps;
  if (!first) throw new Error("no steps");
  const handle = await web.send(ref, { text: first.text, progress: first.progress });
  for (const step of rest) await web.edit(handle, { text: step.text, progress: step.progress });
  const last = steps.at(-1);
  await eventually(() => tab.messages.find((m) => m.id === handle.id && m.markdown === last?.text), 5_000, "the final edit");
  return tab.messages.find((m) => m.id === handle.id) as ChatTab["messages"][number];
}

describe("web chat progress view", () => {
  it("says it shows the view itself", async () => {
    const { web } = await openConversation();
    expect(web.capabilities.progressView).toBe(true);
  });

  it("shows a full view as a panel whose rows end with ✓ and their durations, folding to the summary", async () => {
    const { web, tab, ref } = await openConversation();
    const message = await playRun(web, tab, ref, threeToolRun());
    expect(tab.problems).toEqual([]);
    const panels = message.versions.map((v) => v.panel);
    // While the run went, the panel named the step and the tools, running then done.
    expect(panels[0]).toEqual(["⏳ Searching the web…", '⏳ web_search "antler gateway"']);
    expect(panels).toContainEqual(["⏳ Searching the web…", '✓ web_search "antler gateway" 1.2 s']);
    expect(panels).toContainEqual([
      "⏳ Running tests…",
      '✓ web_search "antler gateway" 1.2 s',
      "✓ read_file README.md 0.3 s",
      "⏳ run_tests unit",
    ]);
    // At the end: the summary line, and three ✓ rows under it.
    expect(message.panel).toEqual([
      "✓ 3 tools, 43 s",
      '✓ web_search "antler gateway" 1.2 s',
      "✓ read_file README.md 0.3 s",
      "✓ run_tests unit 41 s",
    ]);
    // The text beside it is only the reply: the view is not written into it.
    expect(message.versions.every((v) => !v.markdown.includes("web_search"))).toBe(true);
  });

  it("takes the panel away at the end when the summary is off, and shows compact as one line", async () => {
    const { web, tab, ref } = await openConversation();
    const full = await playRun(web, tab, ref, threeToolRun({ summary: false }));
    expect(full.versions.at(-2)?.panel.length).toBe(4);
    expect(full.panel).toEqual([]);
    expect(full.progress).toBeNull();
    const compact = await playRun(web, tab, ref, threeToolRun({ mode: "compact" }));
    expect(compact.versions.map((v) => v.panel[0])).toContain("⏳ Running tests…");
    expect(compact.versions.every((v) => v.panel.length <= 1)).toBe(true);
    expect(compact.panel).toEqual(["✓ 3 tools, 43 s"]);
    expect(tab.problems).toEqual([]);
  });

  it("carries reasoning for its own collapsed block, and never into the text", async () => {
    const { web, tab, ref } = await openConversation();
    const message = await playRun(web, tab, ref, threeToolRun({ reasoning: "First I should search." }));
    expect(message.progress?.reasoning).toBe("First I should search.");
    expect(message.panel.at(-1)).toBe("Reasoning");
    expect(message.versions.every((v) => !v.markdown.includes("First I should"))).toBe(true);
  });

  it("keeps no view in the history: a reload shows the reply's text alone", async () => {
    const { web, tab, ref } = await openConversation();
    const [first, ...rest] = threeToolRun();
    if (!first) throw new Error("no steps");
    // Sent as the outbox sends, so the mailbox keeps it for the history.
    const handle = await web.send(ref, { text: "Working on it.", progress: first.progress }, { idempotencyKey: "run-1:0" });
    for (const step of rest) await web.edit(handle, { text: `Working on it. ${step.text}`, progress: step.progress });
    const history = await tab.loadHistory();
    const kept = history.messages.find((m) => m.id === handle.id);
    expect(kept?.text).toBe("Working on it. All three steps are done.");
    expect(JSON.stringify(history)).not.toContain("web_search");
  });
});
