/**
 * Where a steered message may go into a running thread: right after a tools step whose calls all
 * have their results, so the model's next call reads it after them. Anywhere else it would split
 * a tool call from its result (providers reject that) or come after the final answer, where no
 * model call reads it.
 */
import { type BaseMessage, isToolMessage } from "@langchain/core/messages";
import { closeOpenCalls } from "../repair.js";
import type { RunEvent } from "../types.js";

/** Marks a user message that was steered into a running turn (`additional_kwargs`). */
export const STEERED_KEY = "antler_steered";

/** Whether a thread whose messages these are, with no question open, takes a steered message now. */
export function takesSteer(messages: readonly BaseMessage[], openQuestions: number): boolean {
  const last = messages.at(-1);
  return openQuestions === 0 && !!last && isToolMessage(last) && closeOpenCalls(messages, "").length === 0;
}

/**
 * Follows a run's events to tell when it stands right after a tools step: every tool call it
 * started has ended, and nothing came after the last end. Text or a new call ends that moment.
 */
export class ToolSteps {
  readonly #open = new Set<string>();
  #afterTools = false;

  /** True between the last result of a tools step and whatever the run streams next. */
  get afterTools(): boolean {
    return this.#afterTools;
  }

  see(event: RunEvent): void {
    if (event.type === "tool_start") {
      this.#open.add(event.id);
      this.#afterTools = false;
    } else if (event.type === "tool_end") {
      this.#open.delete(event.id);
      this.#afterTools = this.#open.size === 0;
    } else if (event.type === "text" || event.type === "reasoning") {
      this.#afterTools = false;
    }
  }

  /** A new stream starts: no moment from the old one carries over. */
  reset(): void {
    this.#open.clear();
    this.#afterTools = false;
  }
}
