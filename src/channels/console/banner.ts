/**
 * What `antler chat` prints before the first prompt: which Antler, which agent and model answer,
 * and how to get help and quit.
 */

export interface BannerFacts {
  version: string;
  /** The config file in use. */
  configFile: string;
  /** The agent's backend; for an embedded agent also its model entry, model id and endpoint. */
  backend: string;
  model?: string;
  modelId?: string;
  baseUrl?: string;
}

export function chatBanner(facts: BannerFacts): string {
  const model = facts.model
    ? `model ${facts.model}${facts.modelId && facts.modelId !== facts.model ? ` (${facts.modelId})` : ""}${facts.baseUrl ? ` at ${facts.baseUrl}` : ""}`
    : `the ${facts.backend} backend`;
  return [
    `Antler ${facts.version} — terminal chat (config ${facts.configFile})`,
    `Agent: default, on ${model}`,
    "Type a message and press Enter. /help lists the commands, /new starts over. Ctrl-D or Ctrl-C quits.",
    "",
  ].join("\n");
}
