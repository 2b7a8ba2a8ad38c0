// The slow tool of the follow-ups probe, given to the built gateway through `tools[].use`: it
// waits `ms` milliseconds, so a run lasts long enough for follow-ups to arrive while it works.
import { tool } from "langchain";
import { z } from "zod";

export const waitTool = tool(
  async ({ ms }, config) => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      config?.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
    return `waited ${ms} ms`;
  },
  {
    name: "wait",
    description: "Waits a while, like a slow piece of work.",
    schema: z.object({ ms: z.number().int().min(0).max(10_000) }),
  },
);
