/**
 * The web chat's upload route over the wire: it takes files past the server's 1 MiB webhook body
 * limit up to `media.max_file_mb`, refuses bigger ones and nameless ones with a clear reason, and
 * an upload is usable only by the browser that sent it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestGateway, type TestGateway } from "../contract/gateway.js";
import { newConversationId, WebBrowser } from "../fakes/web/client.js";
import type { ChatTab } from "../fakes/web/tab.js";

let gw: TestGateway;
const tabs: ChatTab[] = [];

beforeAll(async () => {
  gw = await startTestGateway({ channels: { web: { enabled: true } }, sections: { media: { max_file_mb: 3 } } });
}, 60_000);

afterAll(async () => {
  for (const tab of tabs) await tab.close();
  await gw?.stop();
});

async function tab(): Promise<ChatTab> {
  const opened = await new WebBrowser(`${gw.url}/chat`).tab(newConversationId("upload")).open();
  tabs.push(opened);
  return opened;
}

describe("web chat uploads", () => {
  it("takes a file over server.max_body_bytes up to media.max_file_mb, and the agent gets it", async () => {
    const page = await tab();
    const data = Buffer.alloc(2 * 1024 * 1024, "a");
    const res = await page.upload("notes.txt", "text/plain", data);
    expect(res.status).toBe(201);
    const { id, size } = (await res.json()) as { id: string; size: number };
    expect(size).toBe(data.byteLength);
    gw.model.enqueue({ text: "Got your notes." });
    expect((await page.say("here are my notes", undefined, [id])).status).toBe(202);
    await eventually(() => page.messages.find((m) => m.markdown === "Got your notes."), 15_000, "the reply");
    const asked = JSON.stringify(gw.model.requests.at(-1)?.messages ?? []);
    expect(asked).toContain("notes.txt");
  });

  it("refuses a file over media.max_file_mb, saying which limit", async () => {
    const page = await tab();
    const res = await page.upload("big.bin", "application/octet-stream", Buffer.alloc(3 * 1024 * 1024 + 1));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe(
      "big.bin is larger than 3 MB, the largest file this chat takes (media.max_file_mb).",
    );
  });

  it("refuses an upload without a file name, and another browser's upload id", async () => {
    const page = await tab();
    const nameless = await page.browser.request("POST", `/api/conversations/${page.conv}/uploads`, {
      body: "hello",
      contentType: "text/plain",
    });
    expect(nameless.status).toBe(400);
    expect(((await nameless.json()) as { error: string }).error).toContain("x-file-name");
    const mine = (await (await page.upload("a.txt", "text/plain", Buffer.from("hi"))).json()) as { id: string };
    const other = await tab();
    const res = await other.say("use the other file", undefined, [mine.id]);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toMatch(/attach it again/);
  });
});
