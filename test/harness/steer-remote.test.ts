/**
 * Steering a run on a LangGraph API server (the real langgraph-api in this process, its `steer`
 * graph on the mock model): the harness interrupts the server run after its tools step and goes
 * on in a new run with the message (remote/steer.ts). The model call the server started right
 * after the tools step is cut: the mock takes its time to answer it, as a real model does.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RemoteAgentConfig } from "../../src/config/schema.js";
import { RemoteHarness } from "../../src/harness/index.js";
import type { RunEvent } from "../../src/harness/types.js";
import { lastUserText } from "../fakes/openai.js";
import { collect, deltas, last } from "./helpers.js";
import { useLangGraphServer } from "./remote-helpers.js";
import { steerCases } from "./steer-cases.js";

const lg = useLangGraphServer();

steerCases("remote", () => lg.subject("steer"), { cutCall: true });

describe("steer: remote runs", () => {
  it("the new run carries the first run's tag: after a restart, reattach joins the run that took the message", async () => {
    const s = await lg.subject("steer");
    const thread = randomUUID();
    const answer = "Staging is fine too, and that is the whole answer.";
    s.mock.setDefault((req) =>
      lastUserText(req) === "and staging" ? { text: answer, chunkSize: 4, delayMs: 60 } : { text: "cut", firstByteMs: 1500 },
    );
    s.mock.enqueue({ toolCalls: [{ name: "wait", args: { ms: 600 } }] });
    let steered: Promise<string> | undefined;
    const first: RunEvent[] = [];
    try {
      for await (const e of s.harness.run(thread, "go", { tag: "test:msg-1", steerable: true })) {
        first.push(e);
        if (e.type === "tool_start") steered = s.harness.steer(thread, "and staging");
        // The gateway goes away while the new run streams its answer; the server run goes on.
        if (e.type === "text") await s.harness.close();
      }
      expect(await steered).toBe("taken");
      expect(last(first)).toMatchObject({ type: "error" });

      const client = lg.server().client;
      const runs = await client.runs.list(thread);
      expect(runs.map((r) => r.metadata?.antler_tag)).toEqual(["test:msg-1", "test:msg-1"]);
      const settings = RemoteAgentConfig.parse({ url: lg.server().url, assistant_id: "steer", api_key: lg.server().apiKey });
      const next = new RemoteHarness({ settings });
      const events = await collect((await next.reattach(thread, "test:msg-1")) as AsyncIterable<RunEvent>);
      expect(last(events)).toMatchObject({ type: "done", text: answer });
      expect(deltas(events).join("")).toBe(answer);
      await next.close();
      expect((await client.runs.list(thread)).map((r) => r.status).sort()).toEqual(["interrupted", "success"]);
    } finally {
      await s.close();
    }
  });
});
