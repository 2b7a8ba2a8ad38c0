/**
 * `presenter`: a graph that reads its run context and presents files, as a DeerFlow lead agent
 * does. Every model turn appends the run's `context` (as the node received it) to the state's
 * `contexts`. The model's tools, answered by the `tools` node without running anything:
 * - `present_files {filepaths}`: DeerFlow's tool. Paths under `/mnt/user-data/outputs/` go into
 *   the state's `artifacts` (as DeerFlow's reducer keeps them: merged, no duplicates) and the
 *   result is "Successfully presented files"; any other path makes the result an `Error: ...`
 *   and presents nothing.
 * - `attach {path?, name?, data_base64?, url?}`: writes one `artifacts` entry with no tool call
 *   the harness reads: the path itself, or `{name, data_base64}`, or `{name, url}`.
 * - `ask_clarification {question}`: interrupts with `{question}`; the answer is the result.
 * - `wait {ms}`: waits (stops when the run is cancelled), slow enough to steer a message in.
 */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import {
  Annotation,
  type BaseCheckpointSaver,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import type { ChatOpenAI } from "@langchain/openai";

export const OUTPUTS = "/mnt/user-data/outputs/";

const fn = (name: string, properties: Record<string, unknown>) => ({
  type: "function" as const,
  function: { name, description: name, parameters: { type: "object", properties } },
});

const TOOLS = [
  fn("present_files", { filepaths: { type: "array", items: { type: "string" } } }),
  fn("attach", { path: { type: "string" }, name: { type: "string" }, data_base64: { type: "string" }, url: { type: "string" } }),
  fn("ask_clarification", { question: { type: "string" } }),
  fn("wait", { ms: { type: "number" } }),
];

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const PresenterState = Annotation.Root({
  ...MessagesAnnotation.spec,
  artifacts: Annotation<unknown[]>({
    reducer: (old, added) => [...old, ...added.filter((e) => !old.some((o) => same(o, e)))],
    default: () => [],
  }),
  contexts: Annotation<Record<string, unknown>[]>({ reducer: (old, added) => [...old, ...added], default: () => [] }),
});

type Args = Record<string, unknown>;

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** One call's result and the `artifacts` entries it writes. */
async function answer(name: string, args: Args, signal: AbortSignal | undefined): Promise<[string, unknown[]]> {
  if (name === "present_files") {
    const paths = Array.isArray(args.filepaths) ? args.filepaths.map(String) : [];
    const outside = paths.find((p) => !p.startsWith(OUTPUTS));
    if (outside) return [`Error: Only files in ${OUTPUTS} can be presented: ${outside}`, []];
    return ["Successfully presented files", paths];
  }
  if (name === "attach") {
    const { path, name: file, data_base64, url } = args;
    return ["attached", [typeof path === "string" ? path : data_base64 ? { name: file, data_base64 } : { name: file, url }]];
  }
  if (name === "ask_clarification") return [String(interrupt({ question: args.question })), []];
  await wait(Number(args.ms ?? 0), signal);
  return [`waited ${args.ms} ms`, []];
}

export function makePresenterGraph(model: ChatOpenAI, checkpointer?: BaseCheckpointSaver) {
  const bound = model.bindTools(TOOLS);
  const calls = (messages: BaseMessage[]) => {
    const last = messages.at(-1);
    return last && AIMessage.isInstance(last) ? (last.tool_calls ?? []) : [];
  };
  return new StateGraph(PresenterState)
    .addNode("agent", async (state, runtime) => ({
      messages: [await bound.invoke(state.messages, runtime)],
      contexts: [{ ...(runtime.context as Record<string, unknown> | undefined) }],
    }))
    .addNode("tools", async (state, runtime) => {
      const messages: ToolMessage[] = [];
      const artifacts: unknown[] = [];
      for (const call of calls(state.messages)) {
        const [content, written] = await answer(call.name, call.args, runtime.signal);
        messages.push(new ToolMessage({ content, name: call.name, tool_call_id: call.id ?? "" }));
        artifacts.push(...written);
      }
      return { messages, artifacts };
    })
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => (calls(state.messages).length > 0 ? "tools" : END), ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}
