/**
 * Readiness: whether the gateway can handle messages now (`GET /readyz`), and the reused probe
 * of the agents that `/readyz` and the status page share. A probe may take seconds while a
 * readiness check must answer at once, so the last answer is served and refreshed in the
 * background once it is a few seconds old.
 */
import type { ChannelReport } from "../channels/registry.js";
import type { AgentStatus } from "../harness/types.js";

/** How long `/readyz` and the page reuse a probe of the agents. */
export const PROBE_REUSE_MS = 10_000;

/**
 * `load`'s answer, reused: the first call waits for it; later calls get the last answer at once
 * and, once it is `ms` old, start one fresh `load` in the background. A readiness check must
 * answer fast (orchestrators give it a second or so), while a probe may take seconds. An answer
 * `keep` refuses (the agents not built yet) is not reused.
 */
export function reused<T>(load: () => Promise<T>, ms: number, keep: (value: T) => boolean): () => Promise<T> {
  let answer: { value: T; at: number } | undefined;
  let loading: Promise<T> | undefined;
  const refresh = (): Promise<T> => {
    loading ??= load()
      .then((value) => {
        if (keep(value)) answer = { value, at: Date.now() };
        return value;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
  return () => {
    if (!answer) return refresh();
    if (Date.now() - answer.at >= ms) refresh().catch(() => undefined);
    return Promise.resolve(answer.value);
  };
}

/** What /readyz says of the default agent: what it is, whether it can answer, and why not. */
export interface ReadyAgent {
  backend: AgentStatus["backend"];
  target: string;
  reachable: boolean;
  /** The problem when it cannot answer, else null. */
  problem: string | null;
}

/** The body of `/readyz`. */
export interface Readiness {
  ready: boolean;
  state: string;
  waiting: string[];
  agent: ReadyAgent | null;
  problems: string[];
}

/** A URL's place in a text shown to anyone who can reach the port. */
function withoutUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s)]+/gi, "<url>");
}

/** The problem in words that name no host, address or URL, for callers who are not the admin. */
function publicProblem(status: AgentStatus): string {
  const refused = /rejected (the|our) API key|refused our credentials/i.test(status.last_error?.message ?? "");
  const what = status.backend === "remote" ? "agent server" : "model endpoint";
  return `the ${what} ${refused ? "rejected the API key" : "cannot be reached"} (details: GET /api/agent with the admin token)`;
}

/** The default agent for /readyz; only a caller of the admin API reads the URL and the cause. */
function readyAgent(status: AgentStatus, admin: boolean): ReadyAgent {
  const full = status.last_error?.message ?? `the ${status.backend} agent (${status.target}) cannot be reached`;
  const problem = status.reachable ? null : admin ? full : publicProblem(status);
  return {
    backend: status.backend,
    target: admin ? status.target : withoutUrls(status.target),
    reachable: status.reachable,
    problem,
  };
}

/**
 * Ready = started, not draining, every enabled channel connected, and the default agent's model
 * (or server) answering. Before the channels are loaded the list is empty, so the server's own
 * state (`state`, "running" once started) must say "not yet". `admin`: the caller may read the
 * agent's URL and cause.
 */
export function readiness(reports: ChannelReport[], state: string, status: AgentStatus | undefined, admin: boolean): Readiness {
  const waiting = reports.filter((r) => r.enabled && !r.connected && r.state !== "standby").map((r) => r.name);
  const agent = status ? readyAgent(status, admin) : null;
  const problems = [
    ...(state === "running" ? [] : [`the gateway is ${state}`]),
    ...waiting.map((name) => `channel ${name} is not connected`),
    ...(agent?.problem ? [agent.problem] : []),
  ];
  return { ready: problems.length === 0, state, waiting, agent, problems };
}
