/**
 * Tool approval on the `remote` backend, against a real LangGraph API server whose graph uses
 * langchain's human-in-the-loop middleware: the interrupt reaches the chat as an approval, and
 * decisions resume it.
 */
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Clarification } from "../../src/harness/types.js";
import { SEND_EMAIL_ARGS_SCHEMA, sentEmails } from "../fakes/langgraph/graphs.js";
import { collect, last } from "./helpers.js";
import { type RemoteSubject, useLangGraphServer } from "./remote-helpers.js";

const lg = useLangGraphServer();
let s: RemoteSubject | undefined;

beforeEach(() => {
  sentEmails.length = 0;
});
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const ARGS = { to: "ada@example.com", body: "Hello" };

/** Starts a run that pauses on one `send_email` call; returns the approval. */
async function pausedOnEmail(subject: RemoteSubject, thread: string): Promise<Clarification> {
  subject.mock.enqueue({ toolCalls: [{ name: "send_email", id: "call_1", args: ARGS }] });
  const end = last(await collect(subject.harness.run(thread, "email ada")));
  if (end.type !== "clarification") throw new Error(`expected an approval, got ${JSON.stringify(end)}`);
  return end;
}

function toolResults(subject: RemoteSubject): string[] {
  return (subject.mock.requests.at(-1)?.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));
}

describe("tool approval (remote)", () => {
  it("an approval interrupt shows its request; approve runs the tool once", async () => {
    s = await lg.subject("approval");
    const thread = randomUUID();
    const paused = await pausedOnEmail(s, thread);
    expect(paused.options).toEqual([]);
    expect(paused.approval?.requests).toEqual([
      {
        name: "send_email",
        args: ARGS,
        allowed: ["approve", "reject"],
        description: expect.any(String),
        argsSchema: SEND_EMAIL_ARGS_SCHEMA,
      },
    ]);
    expect((await s.harness.getThread(thread))?.pending?.approval?.requests[0]?.name).toBe("send_email");
    expect(sentEmails).toEqual([]);

    s.mock.enqueue({ text: "Sent." });
    const done = last(await collect(s.harness.resume(thread, { decisions: [{ type: "approve" }] })));
    expect(done).toMatchObject({ type: "done", text: "Sent." });
    expect(sentEmails).toEqual([ARGS]);
    expect(toolResults(s)).toEqual(["sent to ada@example.com"]);
  });

  it("reject: the tool never runs and the model reads the reason", async () => {
    s = await lg.subject("approval");
    const thread = randomUUID();
    await pausedOnEmail(s, thread);
    s.mock.enqueue({ text: "Not sent." });
    const done = last(await collect(s.harness.resume(thread, { decisions: [{ type: "reject", message: "Wrong person." }] })));
    expect(done).toMatchObject({ type: "done", text: "Not sent." });
    expect(sentEmails).toEqual([]);
    expect(toolResults(s)).toEqual(["Wrong person."]);
  });

  it("a decision the server does not allow is refused before anything is sent; checkToolArgs uses argsSchema", async () => {
    s = await lg.subject("approval");
    const thread = randomUUID();
    const paused = await pausedOnEmail(s, thread);
    const refused = last(await collect(s.harness.resume(thread, { decisions: [{ type: "edit", args: ARGS }] })));
    expect(refused).toMatchObject({ type: "error", code: "approval_invalid" });
    expect((await s.harness.getThread(thread))?.pending?.approval).toBeDefined();
    const request = paused.approval?.requests[0];
    if (!request) throw new Error("no request");
    expect(await s.harness.checkToolArgs(request, { to: "x" })).toBe("Invalid arguments for send_email: body is missing.");
    expect(await s.harness.checkToolArgs(request, ARGS)).toBeUndefined();
    expect(await s.harness.checkToolArgs({ ...request, argsSchema: undefined }, { anything: 1 })).toBeUndefined();
  });
});
