// A graph whose state has no `messages` key, in the chat: this outer graph over
// MessagesAnnotation maps the user's last message to the inner graph's input (`{ topic }`), runs
// it, and turns its output (`{ report }`) into the reply.
//
// config.yaml:
//   agent:
//     backend: graph
//     graph: "./examples/wrapped-graph.mjs:graph" # relative to the config file
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { buildResearchGraph } from "./research.mjs"; // your graph: { topic } -> { report }

export function graph({ checkpointer, config }) {
  const research = buildResearchGraph(config);
  return new StateGraph(MessagesAnnotation)
    .addNode("research", async (state, runConfig) => {
      const asked = state.messages.findLast((m) => m.getType() === "human");
      // Passing runConfig runs it as a subgraph on the same thread: its checkpoints are kept
      // and an interrupt() inside it is asked in the chat.
      const out = await research.invoke({ topic: asked.text }, runConfig);
      return { messages: [new AIMessage(out.report)] };
    })
    .addEdge(START, "research")
    .addEdge("research", END)
    .compile({ checkpointer });
}
