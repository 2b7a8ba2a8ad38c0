// A hand-written LangGraph graph for Antler's `graph` backend: the model drafts an announcement
// (its tokens stream into the chat), then the graph asks whether to post it (a question with
// Yes / No buttons) and finishes with a pretend post. Plain ESM: Node loads it without a build.
//
// config.yaml:
//   agent:
//     backend: graph
//     graph: "./examples/my-graph.mjs:graph" # relative to the config file
import { AIMessage, SystemMessage } from "@langchain/core/messages";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";

const PROMPT = "Turn the user's note into a short team announcement. Reply with the announcement only.";

// Antler calls this once at startup with its SQLite checkpointer and the loaded config.
export function graph({ checkpointer, config }) {
  // The model comes from the first entry of `models:` in config.yaml.
  const entry = config.models[0];
  if (!entry) throw new Error("add a model under models: in the config");
  const model = new ChatOpenAI({
    model: entry.model,
    apiKey: entry.api_key,
    configuration: { baseURL: entry.base_url },
  });

  // Any top-level node's model tokens are reply text; Antler streams them into the chat.
  async function draft(state) {
    const reply = await model.invoke([new SystemMessage(PROMPT), ...state.messages]);
    return { messages: [reply] };
  }

  // interrupt() pauses the run; Antler shows the question with a button per option. The user's
  // click (the option's label) or typed answer comes back as interrupt()'s return value. On
  // resume the node runs again from the top, so do side effects only after interrupt().
  function approve() {
    const answer = interrupt({ question: "Post this announcement to #general?", options: ["Yes", "No"] });
    if (String(answer).trim().toLowerCase() !== "yes") return { messages: [new AIMessage("Not posted.")] };
    // A real graph would call the chat or mail API here.
    return { messages: [new AIMessage("Posted to #general.")] };
  }

  return new StateGraph(MessagesAnnotation)
    .addNode("draft", draft)
    .addNode("approve", approve)
    .addEdge(START, "draft")
    .addEdge("draft", "approve")
    .addEdge("approve", END)
    .compile({ checkpointer }); // Antler's checkpointer: threads and open questions survive restarts
}
