/**
 * Conversations as the pipeline sees them: which tenant a channel's chats belong to, which
 * agent serves a chat (routes, the user's `/agent` pick), and which thread a message goes to.
 *
 * A conversation keeps its thread while the agent that serves it stays the same; when routing
 * (after a config change) or a `/agent` pick names another agent, it moves to a new thread with
 * that agent, and the old one stays in its history. Every read and write goes through the view
 * of the store limited to the channel's tenant.
 */
import { randomUUID } from "node:crypto";
import type { BindingStore, PendingQuestion } from "../bindings/types.js";
import type { InboundMessage } from "../channels/types.js";
import { DEFAULT_AGENT } from "../config/agents.js";
import type { Harness } from "../harness/types.js";
import type { Logger } from "../log/logger.js";
import type { Route, Router } from "../routing/index.js";
import { commandArgument } from "./commands.js";

/** Where the dispatcher finds the harness of a tenant's agent. */
export interface AgentSource {
  harness(tenant: string, agent: string): Promise<Harness>;
  /** Whether the tenant's chats may use this agent (false for one removed from the config). */
  serves(tenant: string, agent: string): boolean;
  /** The agent's one-line description, for `/agent`. */
  describe?(agent: string): string | undefined;
  /** Who may approve `tool` for the agent, and how long a call waits; undefined when no rule matches. */
  approvalPolicy?(tenant: string, agent: string, tool: string): { approvers: string[]; timeout_ms: number } | undefined;
}

/** A channel's tenant and the view of the store limited to that tenant's rows. */
export interface Scope {
  tenant: string;
  store: BindingStore;
}

/** The channel a conversation is in, with its tenant's scope (a `ChannelScope`, scope.ts). */
export interface ConversationScope extends Scope {
  /** The channel's name. */
  readonly name: string;
}

/** The thread a message goes to, and the agent and harness that serve it. */
export interface ThreadTarget {
  threadId: string;
  agent: string;
  harness: Harness;
  /** The open question of the thread this message moved the conversation away from (routes changed): dropped. */
  dropped?: PendingQuestion;
}

export interface ConversationsOptions {
  /** The store; each channel reads and writes through the view of its tenant's rows. */
  store: BindingStore;
  agents: AgentSource;
  router: Router;
  logger: Logger;
}

export const SWITCH_OFF = "Switching agents is turned off in this chat.";

export class Conversations {
  constructor(private readonly options: ConversationsOptions) {}

  /** A channel's tenant and the view of the store limited to that tenant's rows (its ChannelScope keeps it, scope.ts). */
  scopeOf(channel: string): Scope {
    const tenant = this.options.router.tenantOf(channel);
    const root = this.options.store;
    return { tenant, store: tenant === root.tenant ? root : root.forTenant(tenant) };
  }

  /** The thread a message goes to, moving the conversation to a new one when its agent changed. */
  async threadFor(scope: ConversationScope, msg: InboundMessage): Promise<ThreadTarget> {
    const { store, tenant } = scope;
    const agent = await this.agentFor(scope, msg);
    const harness = await this.options.agents.harness(tenant, agent);
    const current = await store.currentBinding(msg.ref.key);
    if (current && (current.agent ?? DEFAULT_AGENT) === agent) return { threadId: current.threadId, agent, harness };
    if (current)
      this.options.logger.info({ channel: scope.name, key: msg.ref.key, agent }, "conversation moves to another agent");
    const dropped = current ? await store.getPending(current.threadId) : undefined;
    const threadId = await this.bindNewThread(scope, msg.ref.key, agent);
    return { threadId, agent, harness, ...(dropped ? { dropped } : {}) };
  }

  /** Makes a new thread served by `agent` current; the old one's open question is dropped. */
  async bindNewThread(scope: ConversationScope, key: string, agent: string): Promise<string> {
    const { store } = scope;
    const old = await store.currentThread(key);
    if (old) await store.clearPending(old);
    const threadId = randomUUID();
    await store.bindThread(key, threadId, agent);
    return threadId;
  }

  /** Starts a new thread for a turn that asks for one (a schedule's `thread: fresh`), with the agent it runs. */
  async freshThread(scope: ConversationScope, msg: InboundMessage): Promise<string> {
    return this.bindNewThread(scope, msg.ref.key, await this.agentFor(scope, msg));
  }

  /**
   * The agent for a chat: the one a scheduled or API turn names, else the user's `/agent` pick
   * where the route allows one, else the route's.
   */
  async agentFor(scope: ConversationScope, msg: InboundMessage, route = this.routeOf(scope, msg)): Promise<string> {
    if (msg.origin?.agent) return msg.origin.agent;
    if (!route.allowSwitch) return route.agent;
    const chosen = await scope.store.chosenAgent(msg.ref.key);
    return chosen && route.choices.includes(chosen) ? chosen : route.agent;
  }

  /** The agent serving a thread of this conversation (its binding says which). */
  async agentOfThread(scope: ConversationScope, key: string, threadId: string): Promise<string> {
    const { store } = scope;
    const current = await store.currentBinding(key);
    const binding =
      current?.threadId === threadId ? current : (await store.threadHistory(key)).find((b) => b.threadId === threadId);
    return binding?.agent ?? DEFAULT_AGENT;
  }

  async harnessOfThread(scope: ConversationScope, key: string, threadId: string): Promise<Harness> {
    return this.options.agents.harness(scope.tenant, await this.agentOfThread(scope, key, threadId));
  }

  /** Whether the agent of a thread is still one this channel's tenant may use. */
  async servesThread(scope: ConversationScope, key: string, threadId: string): Promise<boolean> {
    return this.serves(scope, await this.agentOfThread(scope, key, threadId));
  }

  /** Whether this channel's tenant may use the agent. */
  serves(scope: ConversationScope, agent: string): boolean {
    return this.options.agents.serves(scope.tenant, agent);
  }

  harness(scope: ConversationScope, agent: string): Promise<Harness> {
    return this.options.agents.harness(scope.tenant, agent);
  }

  /** `/agent` lists the agents this chat may use; `/agent NAME` moves it to a new thread with one. Returns the reply. */
  async agentCommand(scope: ConversationScope, msg: InboundMessage): Promise<string> {
    const route = this.routeOf(scope, msg);
    const current = await this.agentFor(scope, msg, route);
    const wanted = commandArgument(msg.text);
    if (!wanted) return this.agentList(route, current);
    if (!route.allowSwitch) return `${SWITCH_OFF} This chat talks to ${current}.`;
    const name = route.choices.find((c) => c.toLowerCase() === wanted.toLowerCase());
    if (!name) return `There is no agent named "${wanted}" here. You can pick: ${route.choices.join(", ")}.`;
    await scope.store.setChosenAgent(msg.ref.key, name);
    if (name === current) return `You are already talking to ${name}.`;
    await this.bindNewThread(scope, msg.ref.key, name);
    return `Switched to ${name}. This starts a new conversation.`;
  }

  private agentList(route: Route, current: string): string {
    const lines = route.choices.map((name) => {
      const about = this.options.agents.describe?.(name);
      return `- ${name}${about ? ` — ${about}` : ""}${name === current ? " (current)" : ""}`;
    });
    const how = route.allowSwitch ? "Switch with /agent NAME." : SWITCH_OFF;
    return ["Agents you can talk to here:", ...lines, "", how].join("\n");
  }

  /** The routing decision for a message's chat. */
  routeOf(scope: ConversationScope, msg: Pick<InboundMessage, "ref" | "user">): Route {
    return this.options.router.route({
      channel: scope.name,
      chat: msg.ref.chatId,
      user: msg.user.id,
      workspace: msg.ref.workspace,
      chatType: msg.ref.chatType,
    });
  }
}
