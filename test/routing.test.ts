/**
 * Routing rules and the config checks behind them: which agent a chat gets, and what startup
 * refuses or warns about. One test per precedence rule.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config/loader.js";
import { type RouteInput, Router, routeWarnings } from "../src/routing/index.js";
import { configIssues } from "./helpers/config.js";

const AGENTS = `
agents:
  support: { system_prompt: "support" }
  research: { system_prompt: "research", description: "Digs through sources" }
  personal: { system_prompt: "personal" }
channels:
  slack: { enabled: true }
  telegram: { enabled: true }
  feishu: { enabled: true }
`;

function router(extra: string): Router {
  return new Router(parseConfig(AGENTS + extra, {}));
}

const dm: RouteInput = { channel: "telegram", chat: "100", user: "u1", chatType: "direct" };
const group: RouteInput = { channel: "slack", chat: "C1", user: "U1", workspace: "T1", chatType: "group" };

describe("routes", () => {
  it("sends a chat no rule matches to the default agent", () => {
    const r = router("routes:\n  - { channel: feishu, agent: research }\n");
    expect(r.route(dm)).toMatchObject({ tenant: "default", agent: "default", rule: undefined, allowSwitch: true });
  });

  it("matches on channel", () => {
    const r = router("routes:\n  - { channel: telegram, agent: personal }\n");
    expect(r.route(dm).agent).toBe("personal");
    expect(r.route(group).agent).toBe("default");
  });

  it("matches on chat, and a chat rule listed first wins over a channel rule", () => {
    const r = router("routes:\n  - { chat: C1, agent: research }\n  - { channel: slack, agent: support }\n");
    expect(r.route(group)).toMatchObject({ agent: "research", rule: 0 });
    expect(r.route({ ...group, chat: "C2" })).toMatchObject({ agent: "support", rule: 1 });
  });

  it("the first match wins: a channel rule listed before a chat rule takes the chat", () => {
    const r = router("routes:\n  - { channel: slack, agent: support }\n  - { chat: C1, agent: research }\n");
    expect(r.route(group)).toMatchObject({ agent: "support", rule: 0 });
  });

  it("matches on user, across channels", () => {
    const r = router("routes:\n  - { user: [u1, U9], agent: personal }\n  - { channel: slack, agent: support }\n");
    expect(r.route(dm).agent).toBe("personal");
    expect(r.route(group).agent).toBe("support");
    expect(r.route({ ...group, user: "U9" }).agent).toBe("personal");
  });

  it("matches on chat type: direct or group", () => {
    const r = router("routes:\n  - { chat_type: direct, agent: personal }\n  - { chat_type: group, agent: support }\n");
    expect(r.route(dm).agent).toBe("personal");
    expect(r.route(group).agent).toBe("support");
  });

  it("still reads chat_type dm, the old name of direct, with a warning", () => {
    const text = `${AGENTS}routes:\n  - { chat_type: dm, agent: personal }\n  - { chat_type: direct, agent: research }\n`;
    const config = parseConfig(text, {});
    const r = new Router(config);
    expect(r.route(dm).agent).toBe("personal");
    expect(r.route(group).agent).toBe("default");
    expect(routeWarnings(config)).toEqual([
      "routes[0].chat_type: dm is deprecated: write direct",
      "routes[1] (agent research): routes[0] matches every chat it would, so it never matches",
    ]);
  });

  it("matches on workspace, and never matches a chat without one", () => {
    const r = router("routes:\n  - { workspace: T1, agent: support }\n");
    expect(r.route(group).agent).toBe("support");
    expect(r.route({ ...group, workspace: "T2" }).agent).toBe("default");
    expect(r.route(dm).agent).toBe("default");
  });

  it("needs every matcher of a rule to hold", () => {
    const r = router("routes:\n  - { channel: slack, chat_type: direct, agent: personal }\n");
    expect(r.route(group).agent).toBe("default");
    expect(r.route({ ...group, chatType: "direct" }).agent).toBe("personal");
  });

  it("offers the tenant's agents for /agent, or the rule's switch_to, and can forbid switching", () => {
    const r = router(
      "routes:\n  - { channel: slack, agent: support, allow_switch: false }\n  - { channel: telegram, agent: personal, switch_to: [research] }\n",
    );
    expect(r.route(group)).toMatchObject({ agent: "support", allowSwitch: false });
    expect(r.route(dm).choices).toEqual(["research", "personal"]);
    expect(r.route({ ...dm, channel: "feishu" }).choices).toEqual(["default", "support", "research", "personal"]);
  });
});

describe("tenants", () => {
  const TENANTS = `
routes:
  - { channel: slack, agent: support }
tenants:
  acme:
    channels: [slack]
    agents: [support]
    default_agent: support
  globex:
    channels: [feishu]
`;

  it("gives each channel its tenant, and each tenant its own and the shared agents", () => {
    const r = router(TENANTS);
    expect(r.route(group)).toMatchObject({ tenant: "acme", agent: "support" });
    expect(r.route({ ...group, chat: "C2" }).choices).toEqual(["default", "support", "research", "personal"]);
    expect(r.route({ ...dm, channel: "feishu" })).toMatchObject({ tenant: "globex", agent: "default" });
    expect(r.route({ ...dm, channel: "feishu" }).choices).toEqual(["default", "research", "personal"]);
    expect(r.route(dm).tenant).toBe("default");
  });

  it("uses a tenant's default_agent for its chats no rule matches", () => {
    const r = router(
      TENANTS.replace("  - { channel: slack, agent: support }\n", "  - { chat: none, channel: slack, agent: support }\n"),
    );
    expect(r.route(group)).toMatchObject({ tenant: "acme", agent: "support", rule: undefined });
  });
});

describe("config checks", () => {
  it("refuses a route to an unknown agent, naming the known ones", () => {
    expect(configIssues(`${AGENTS}routes:\n  - { channel: slack, agent: sales }\n`)).toEqual([
      'routes[0].agent: no agent named "sales": known agents: default, support, research, personal',
    ]);
  });

  it("refuses unknown tools and MCP servers an agent names", () => {
    expect(configIssues("agents:\n  a: { tools: [nope], mcp_servers: [gone] }\n")).toEqual([
      'agents.a.tools[0]: no tool named "nope" under tools:',
      'agents.a.mcp_servers[0]: no server named "gone" under mcp_servers:',
    ]);
  });

  it("refuses an agent named default and names with spaces", () => {
    expect(configIssues("agents:\n  default: {}\n  my agent: {}\n")).toEqual([
      'agents.default: "default" is the agent under agent:; give this one another name',
      "agents.my agent: must be letters, digits, '_', '.' or '-', starting with a letter or digit",
    ]);
  });

  it("refuses a channel, agent or server claimed by two tenants, and unknown names", () => {
    const found = configIssues(
      `${AGENTS}tenants:\n  a: { channels: [slack], agents: [support] }\n  b: { channels: [slack, discord], agents: [support] }\n`,
    );
    expect(found).toEqual([
      'tenants.b.channels[0]: "slack" already belongs to tenant a',
      'tenants.b.channels[1]: no entry named "discord" under channels:',
      'tenants.b.agents[0]: "support" already belongs to tenant a',
    ]);
  });

  it("refuses a route that would send another tenant's chats to a tenant's own agent", () => {
    const tenants = "tenants:\n  acme: { channels: [slack], agents: [support] }\n";
    expect(configIssues(`${AGENTS}${tenants}routes:\n  - { chat_type: group, agent: support }\n`)).toEqual([
      'routes[0].channel: agent "support" belongs to tenant acme: list only that tenant\'s channels here (this rule matches every channel)',
    ]);
    expect(configIssues(`${AGENTS}${tenants}routes:\n  - { channel: [slack, feishu], agent: support }\n`)).toEqual([
      'routes[0].channel: agent "support" belongs to tenant acme: list only that tenant\'s channels here (not feishu)',
    ]);
  });

  it("refuses an agent using another tenant's MCP server, and a default_agent the tenant may not use", () => {
    const found = configIssues(
      `mcp_servers:\n  tickets: { command: x }\nagents:\n  a: { mcp_servers: [tickets] }\n  b: {}\ntenants:\n  one: { mcp_servers: [tickets] }\n  two: { agents: [b] }\n  three: { default_agent: b }\n`,
    );
    expect(found).toEqual([
      'tenants.three.default_agent: "b" is not an agent this tenant may use: default, a',
      'agents.a.mcp_servers[0]: server "tickets" belongs to tenant one, which does not own this agent',
    ]);
  });

  it("warns about rules that can never match", () => {
    const config = parseConfig(
      `${AGENTS}  dingtalk: { enabled: false }\nroutes:\n  - { chat_type: direct, agent: personal }\n  - { chat_type: direct, user: u1, agent: research }\n  - { channel: dingtalk, agent: support }\n  - { chat: [], agent: support }\n`,
      {},
    );
    expect(routeWarnings(config)).toEqual([
      "routes[1] (agent research): routes[0] matches every chat it would, so it never matches",
      "routes[2] (agent support): channel dingtalk is not configured or not enabled, so it never matches",
      "routes[3] (agent support): chat is an empty list, so it never matches",
    ]);
  });
});
