// A graph with a state of its own, not messages: `{ topic }` in, `{ report }` out. It stands for
// a graph you already have; wrapped-graph.mjs puts it in the chat. Two steps: the model lists
// what to cover, then writes a short report from that list. Plain ESM: Node loads it as is.
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";

const ResearchState = Annotation.Root({
  topic: Annotation(),
  points: Annotation(),
  report: Annotation(),
});

/** Builds the research graph with the first model of Antler's config (`models[0]`). */
export function buildResearchGraph(config) {
  const entry = config.models[0];
  if (!entry) throw new Error("add a model under models: in the config");
  const model = new ChatOpenAI({ model: entry.model, apiKey: entry.api_key, configuration: { baseURL: entry.base_url } });
  const ask = async (system, text) => (await model.invoke([new SystemMessage(system), new HumanMessage(text)])).text;

  return new StateGraph(ResearchState)
    .addNode("outline", async ({ topic }) => ({
      points: await ask("List the three things a short report on this topic must cover, one per line.", topic),
    }))
    .addNode("write", async ({ topic, points }) => ({
      report: await ask("Write a report of at most 150 words on the topic, covering the points given.", `${topic}\n\n${points}`),
    }))
    .addEdge(START, "outline")
    .addEdge("outline", "write")
    .addEdge("write", END)
    .compile();
}
