/**
 * The mock model of the follow-ups probe. Every user message carries a token (`c12m7`: chat 12,
 * message 7) that only it has. A reply answers the user messages the model sees since its last
 * answer (the newest assistant text: a reply, or a cut-off partial marked as such), whichever
 * way they came (one each, a collected list, steered in after a tool result), and names their
 * tokens at both ends: `Answer to c12m7 c12m8: … (end of c12m7 c12m8)`. So a complete reply in
 * the chat says which messages it answers, and a cut-off one is never complete.
 *
 * Most runs first call the slow `wait` tool (slow-tool.mjs, 200–600 ms), and one that was
 * steered a message after the tool may call it once more; the answer then streams in small
 * chunks (~0.2–0.5 s), so a run lasts about 0.3–1 s.
 */
import { type ChatCompletionRequest, contentText, type MockReply, type WireMessage } from "../fakes/openai.js";

/** The token of a probe message. */
export const TOKEN = /\bc\d+m\d+\b/g;

export function tokenOf(chat: number, index: number): string {
  return `c${chat}m${index}`;
}

const FILLER = "noted and done here is what you asked for in full with every detail checked twice".split(" ");

/** The complete answer to the messages with these tokens, in this order. */
export function answerText(tokens: string[]): string {
  const head = tokens.join(" ");
  const words = Array.from({ length: 16 + (hash(head) % 20) }, (_, i) => FILLER[i % FILLER.length]);
  return `Answer to ${head}: ${words.join(" ")} (end of ${head})`;
}

const COMPLETE = /^Answer to ((?:c\d+m\d+ ?)+): [\s\S]* \(end of ([^)]*)\)$/;

/** The tokens a complete answer names; undefined for anything else (a partial, a notice). */
export function answeredTokens(text: string): string[] | undefined {
  const match = COMPLETE.exec(text.trim());
  if (!match || match[1]?.trim() !== match[2]?.trim()) return undefined;
  return match[1]?.trim().split(" ");
}

/** The start of an answer cut off before its end (or any prefix of one). */
export function isPartialAnswer(text: string): boolean {
  const t = text.trim();
  return t.length > 0 && (t.startsWith("Answer to ") || "Answer to ".startsWith(t)) && !answeredTokens(t);
}

let calls = 0;

/** When the call with this id (the script's own ids) was made, ms epoch. */
export function callMadeAt(id: string | undefined): number | undefined {
  const at = /^call_(\d+)_/.exec(id ?? "")?.[1];
  return at ? Number(at) : undefined;
}

export function followupScript(req: ChatCompletionRequest): MockReply {
  const seg = sinceLastAnswer(req.messages);
  const tokens = [...new Set(seg.filter((m) => m.role === "user").flatMap((m) => contentText(m.content).match(TOKEN) ?? []))];
  if (tokens.length === 0) return { text: "There is nothing new to answer." };
  const h = hash(tokens[0] as string);
  const made = seg.filter((m) => m.role === "assistant" && (m.tool_calls?.length ?? 0) > 0).length;
  const lastTool = seg.findLastIndex((m) => m.role === "tool");
  const steeredAfterTool = lastTool >= 0 && seg.slice(lastTool).some((m) => m.role === "user");
  const wantsTool = made === 0 ? h % 4 !== 0 : made < 2 && steeredAfterTool && h % 2 === 0;
  if (wantsTool) return { toolCalls: [{ name: "wait", args: { ms: 200 + (h % 5) * 100 }, id: `call_${Date.now()}_${++calls}` }] };
  return { text: answerText(tokens), chunkSize: 16, delayMs: 35 };
}

/** The messages after the newest assistant text (a reply, or a partial marked cut off). */
function sinceLastAnswer(messages: WireMessage[]): WireMessage[] {
  const last = messages.findLastIndex(
    (m) => m.role === "assistant" && (m.tool_calls?.length ?? 0) === 0 && contentText(m.content).trim() !== "",
  );
  return messages.slice(last + 1);
}

function hash(text: string): number {
  let h = 0;
  for (const ch of text) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h;
}
