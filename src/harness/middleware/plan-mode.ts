/**
 * Plan mode: the agent keeps a to-do list with langchain's `write_todos` tool (its to-do
 * middleware: the tool, the `todos` state key and the prompt that says when to plan). The chat
 * shows each `write_todos` call as the plan in the progress view (src/core/progress).
 *
 * langchain's middleware refuses parallel `write_todos` calls in an `afterModel` hook, which
 * LangGraph runs as a graph step of its own (with a checkpoint) on every model turn. Here the
 * same refusal happens where the calls run (`wrapToolCall`), so plan mode adds no step.
 */
import { type BaseMessage, isAIMessage, ToolMessage } from "@langchain/core/messages";
import { type AgentMiddleware, createMiddleware, type TodoListMiddlewareOptions, todoListMiddleware } from "langchain";

export const PLAN_MODE = "PlanMode";
/** The tool the agent writes its plan with (the progress view knows it by this name). */
export const WRITE_TODOS = "write_todos";

const PARALLEL =
  "Error: The `write_todos` tool should never be called multiple times in parallel. Please call it only once per model invocation to update the todo list.";

/** The to-do list: `options` are langchain's (`systemPrompt`, `toolDescription`). */
export function planModeMiddleware(options?: TodoListMiddlewareOptions): AgentMiddleware {
  const todo = todoListMiddleware(options);
  return createMiddleware({
    name: PLAN_MODE,
    stateSchema: todo.stateSchema,
    tools: todo.tools,
    wrapModelCall: todo.wrapModelCall,
    wrapToolCall: async (request, handler) => {
      const { toolCall } = request;
      if (toolCall.name !== WRITE_TODOS || !inParallel(request.state.messages)) return handler(request);
      return new ToolMessage({ content: PARALLEL, tool_call_id: toolCall.id ?? "", name: WRITE_TODOS, status: "error" });
    },
  }) as unknown as AgentMiddleware;
}

/** Whether the newest model turn called `write_todos` more than once. */
function inParallel(messages: readonly BaseMessage[]): boolean {
  const last = messages.findLast((m) => isAIMessage(m));
  const calls = last && isAIMessage(last) ? (last.tool_calls ?? []) : [];
  return calls.filter((c) => c.name === WRITE_TODOS).length > 1;
}
