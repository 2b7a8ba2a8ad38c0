/**
 * The built-in `ask_clarification` tool. The model calls it when it cannot go on without the
 * user; the run pauses on a LangGraph `interrupt()` and resumes with the user's answer, which is
 * the tool's result.
 */
import { interrupt } from "@langchain/langgraph";
import { tool } from "langchain";
import { z } from "zod";
import type { Clarification } from "../types.js";

export const ASK_CLARIFICATION = "ask_clarification";

export const ClarificationArgs = z.object({
  question: z.string().describe("The question to ask the user, in one or two sentences."),
  options: z.array(z.string()).optional().describe("Suggested answers the user can pick from, when there are a few."),
  context: z.string().optional().describe("Why you need to know, in one short sentence."),
  kind: z
    .enum(["missing_info", "ambiguous", "confirm", "choice"])
    .optional()
    .describe("missing_info, ambiguous, confirm (a yes/no before acting) or choice."),
});

/** The interrupt payload: a Clarification without its interrupt id (LangGraph assigns that). */
export type ClarificationRequest = Omit<Clarification, "interruptId">;

const MAX_OPTIONS = 10;

/** Cleans model-written arguments: trims text, drops empty and duplicate options. */
export function normalizeClarification(args: unknown): ClarificationRequest {
  const raw = (args ?? {}) as Record<string, unknown>;
  const question = typeof raw.question === "string" && raw.question.trim() ? raw.question.trim() : "Could you clarify?";
  const options = Array.isArray(raw.options)
    ? [...new Set(raw.options.map((o) => String(o).trim()).filter(Boolean))].slice(0, MAX_OPTIONS)
    : [];
  const out: ClarificationRequest = { question, options };
  if (typeof raw.kind === "string" && raw.kind) out.kind = raw.kind;
  if (typeof raw.context === "string" && raw.context.trim()) out.context = raw.context.trim();
  return out;
}

/** Pauses the run on the question; returns the answer once resumed. */
export function askForClarification(request: ClarificationRequest): string {
  const answer: unknown = interrupt(request);
  return typeof answer === "string" ? answer : JSON.stringify(answer);
}

export const askClarificationTool = tool(async (args) => askForClarification(normalizeClarification(args)), {
  name: ASK_CLARIFICATION,
  description:
    "Ask the user a question when you cannot continue without their answer (missing information, an ambiguous " +
    "request, or a confirmation before a risky action). The conversation pauses until they reply; their reply is " +
    "this tool's result. Do not use it for small talk.",
  schema: ClarificationArgs,
});
