/** A small graph for the checkpointer tests: it counts each turn, then asks before it finishes, so a run ends paused on its question. */
import { Annotation, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";

const State = Annotation.Root({
  count: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export function pausingGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode("bump", () => ({ count: 1 }))
    .addNode("ask", () => ({ log: [String(interrupt("Go on?"))] }))
    .addEdge(START, "bump")
    .addEdge("bump", "ask")
    .addEdge("ask", END)
    .compile({ checkpointer });
}
