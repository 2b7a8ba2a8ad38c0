/**
 * Test graphs for the in-process LangGraph API server (./server.ts), and the factories behind
 * them so a test can build the same graphs in process.
 *
 * The server loads the exports `agent`, `question`, `deerflow`, `approval`, `steer` and `presenter`. All but `question` are
 * graph factories (`(config) => graph`, which langgraph-api calls per request): they read the
 * mock model's URL from `ANTLER_TEST_MODEL_URL` when called, not when this file is imported,
 * because the server may import this file before a test has started its mock model.
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { type BaseCheckpointSaver, END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { ChatOpenAI } from "@langchain/openai";
import { createAgent, humanInTheLoopMiddleware, type ReactAgent } from "langchain";
import { z } from "zod";
import { askClarificationTool } from "../../../src/harness/tools/index.js";
import { progressTool, waitTool } from "../../../src/testing/tools.js";
import { makePresenterGraph } from "./presenter.js";

/** Env var that carries the mock model's base URL (ending in /v1) to the graphs. */
export const MODEL_URL_ENV = "ANTLER_TEST_MODEL_URL";

/** A ChatOpenAI pointed at the mock model server. */
export function mockChatModel(baseURL: string): ChatOpenAI {
  return new ChatOpenAI({ model: "mock-model", apiKey: "sk-test", configuration: { baseURL }, maxRetries: 0 });
}

function modelFromEnv(): ChatOpenAI {
  const url = process.env[MODEL_URL_ENV];
  if (!url) throw new Error(`${MODEL_URL_ENV} is not set: start the mock model before running a graph`);
  return mockChatModel(url);
}

/** Builds once per model URL: langgraph-api calls a factory on every request. */
function perModelUrl<T>(build: (model: ChatOpenAI) => T): () => T {
  let cached: { url: string; value: T } | undefined;
  return () => {
    const url = process.env[MODEL_URL_ENV] ?? "";
    if (cached?.url !== url) cached = { url, value: build(modelFromEnv()) };
    return cached.value;
  };
}

// ---------------------------------------------------------------------------------------------
// agent: createAgent with ask_clarification (interrupts), lookup_weather, slow_tool, ask_expert
// and run_steps (progressTool: reports each step through the custom stream).

export const lookupWeatherTool = tool(async ({ city }) => `It is sunny in ${city}.`, {
  name: "lookup_weather",
  description: "Current weather in a city.",
  schema: z.object({ city: z.string() }),
});

/** Waits `SLOW_TOOL_MS`, or until the run is cancelled (then it throws the abort reason). */
export const SLOW_TOOL_MS = 5_000;
/** What slow_tool did, in this process (the server shares this module with the test). */
export const slowToolStats = { started: 0, finished: 0, aborted: 0 };
export const slowTool = tool(
  async (_args, config?: RunnableConfig) => {
    const signal = config?.signal;
    slowToolStats.started++;
    await new Promise<void>((resolve, reject) => {
      const abort = () => {
        clearTimeout(timer);
        slowToolStats.aborted++;
        reject(signal?.reason ?? new Error("aborted"));
      };
      const timer = setTimeout(resolve, SLOW_TOOL_MS);
      if (signal?.aborted) abort();
      else signal?.addEventListener("abort", abort, { once: true });
    });
    slowToolStats.finished++;
    return "slow work done";
  },
  { name: "slow_tool", description: "Does slow work.", schema: z.object({}) },
);

/** A tool that asks the model itself: its tokens stream inside the tools node, and are not the reply. */
export function makeAskExpertTool(model: ChatOpenAI) {
  return tool(async ({ topic }) => (await model.invoke(`Explain ${topic}`)).text, {
    name: "ask_expert",
    description: "Asks an expert model about a topic.",
    schema: z.object({ topic: z.string() }),
  });
}

export function makeAgentGraph(model: ChatOpenAI, checkpointer?: BaseCheckpointSaver) {
  const tools = [askClarificationTool, lookupWeatherTool, slowTool, makeAskExpertTool(model), progressTool()];
  return createAgent({ model, tools, checkpointer });
}

/** Server export `agent`. */
export const agent = perModelUrl((model) => makeAgentGraph(model));

// ---------------------------------------------------------------------------------------------
// question: interrupts with a value that is not clarification-shaped; no model.

export const QUESTION_INTERRUPT = { description: "Publish the draft to the blog?", draft: "Antler 1.0 is out" };

export function makeQuestionGraph(checkpointer?: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("ask", () => {
      const answer: unknown = interrupt(QUESTION_INTERRUPT);
      const text = typeof answer === "string" ? answer : JSON.stringify(answer);
      return { messages: [new AIMessage(`Published (answer: ${text}).`)] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer });
}

/** Server export `question`. */
export const question = makeQuestionGraph();

// ---------------------------------------------------------------------------------------------
// deerflow: DeerFlow 2.x style clarification. `ask_clarification` is a tool schema the model
// can call; the `clarify` node answers the call with a ToolMessage holding the question and
// its numbered options, then the graph ENDS (no interrupt). The user's answer is a new run.

export const DEERFLOW_CLARIFY_TOOL = {
  type: "function" as const,
  function: {
    name: "ask_clarification",
    description: "Ask the user for clarification when the request is unclear.",
    parameters: {
      type: "object",
      properties: {
        question: { type: "string" },
        clarification_type: {
          type: "string",
          enum: ["missing_info", "ambiguous_requirement", "approach_choice", "risk_confirmation", "suggestion"],
        },
        context: { type: "string" },
        options: { type: "array", items: { type: "string" } },
      },
      required: ["question", "clarification_type"],
    },
  },
};

/** The clarification as text, the way DeerFlow shows it: question, then numbered options. */
export function formatDeerflowClarification(args: Record<string, unknown>): string {
  const question = typeof args.question === "string" ? args.question : "";
  const context = typeof args.context === "string" && args.context ? args.context : undefined;
  const options = Array.isArray(args.options) ? args.options.map(String) : [];
  const lines = context ? [`❓ ${context}`, "", question] : [`❓ ${question}`];
  if (options.length > 0) lines.push("", ...options.map((o, i) => `  ${i + 1}. ${o}`));
  return lines.join("\n");
}

function clarificationCall(messages: BaseMessage[]) {
  const last = messages.at(-1);
  if (!last || !AIMessage.isInstance(last)) return undefined;
  return last.tool_calls?.find((c) => c.name === "ask_clarification");
}

export function makeDeerflowGraph(model: ChatOpenAI, checkpointer?: BaseCheckpointSaver) {
  const bound = model.bindTools([DEERFLOW_CLARIFY_TOOL]);
  return new StateGraph(MessagesAnnotation)
    .addNode("model", async (state, config) => ({ messages: [await bound.invoke(state.messages, config)] }))
    .addNode("clarify", (state) => {
      const call = clarificationCall(state.messages);
      if (!call) return {};
      const content = formatDeerflowClarification(call.args);
      return { messages: [new ToolMessage({ content, name: "ask_clarification", tool_call_id: call.id ?? "" })] };
    })
    .addEdge(START, "model")
    .addConditionalEdges("model", (state) => (clarificationCall(state.messages) ? "clarify" : END), ["clarify", END])
    .addEdge("clarify", END)
    .compile({ checkpointer });
}

/** Server export `deerflow`. */
export const deerflow = perModelUrl((model) => makeDeerflowGraph(model));

// ---------------------------------------------------------------------------------------------
// approval: createAgent with langchain's human-in-the-loop middleware on `send_email`, as a
// server of its own would have it (not Antler's config): approve or reject `send_email`, and
// approve, reject or edit `send_memo`, each with an args schema.

/** Every `send_email` call that ran on the server, in this process. */
export const sentEmails: Array<Record<string, unknown>> = [];

export const sendEmailTool = tool(
  async (args: { to: string; body: string }) => {
    sentEmails.push(args);
    return `sent to ${args.to}`;
  },
  { name: "send_email", description: "Sends an email.", schema: z.object({ to: z.string(), body: z.string() }) },
);

/** Every `send_memo` call that ran on the server, in this process. */
export const sentMemos: Array<Record<string, unknown>> = [];

export const sendMemoTool = tool(
  async (args: { to: string; body: string }) => {
    sentMemos.push(args);
    return `memo to ${args.to}`;
  },
  { name: "send_memo", description: "Sends a memo.", schema: z.object({ to: z.string(), body: z.string() }) },
);

/** The JSON schema the server's approval sends for `send_email`'s (and `send_memo`'s) arguments. */
export const SEND_EMAIL_ARGS_SCHEMA = {
  type: "object",
  properties: { to: { type: "string" }, body: { type: "string" } },
  required: ["to", "body"],
};

export function makeApprovalGraph(model: ChatOpenAI, checkpointer?: BaseCheckpointSaver): ReactAgent {
  const approval = humanInTheLoopMiddleware({
    interruptOn: {
      send_email: { allowedDecisions: ["approve", "reject"], argsSchema: SEND_EMAIL_ARGS_SCHEMA },
      send_memo: { allowedDecisions: ["approve", "reject", "edit"], argsSchema: SEND_EMAIL_ARGS_SCHEMA },
    },
  });
  return createAgent({
    model,
    tools: [sendEmailTool, sendMemoTool, lookupWeatherTool],
    middleware: [approval],
    checkpointer,
  }) as unknown as ReactAgent;
}

/** Server export `approval`. */
export const approval = perModelUrl((model) => makeApprovalGraph(model));

// ---------------------------------------------------------------------------------------------
// steer: createAgent with the `wait` tool (src/testing/tools.ts), a tool call slow enough to
// steer a message into the turn while it runs. `makeToolLoopGraph` is the same loop written by
// hand (a model node, a ToolNode named `tools`), as a user of the graph backend may write it.

export function makeSteerGraph(model: ChatOpenAI, checkpointer?: BaseCheckpointSaver) {
  return createAgent({ model, tools: [waitTool()], checkpointer });
}

/** Server export `steer`. */
export const steer = perModelUrl((model) => makeSteerGraph(model));

export function makeToolLoopGraph(model: ChatOpenAI, checkpointer?: BaseCheckpointSaver) {
  const tools = [waitTool()];
  const bound = model.bindTools(tools);
  const wantsTools = (state: typeof MessagesAnnotation.State) => {
    const last = state.messages.at(-1);
    return last && AIMessage.isInstance(last) && last.tool_calls?.length ? "tools" : END;
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config) => ({ messages: [await bound.invoke(state.messages, config)] }))
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", wantsTools, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

/** Server export `presenter` (./presenter.ts): reads its run context and presents files. */
export const presenter = perModelUrl((model) => makePresenterGraph(model));
