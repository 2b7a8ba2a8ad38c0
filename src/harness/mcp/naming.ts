/**
 * The names the model sees for MCP tools. A server's `tool_prefix` is always applied; a name that
 * is still taken (by a configured or built-in tool, or by a tool of another server) gets the
 * server name in front, on every side of the collision, so no tool silently shadows another.
 */

/** OpenAI-compatible APIs accept `^[a-zA-Z0-9_-]{1,64}$` as a function name. */
const MAX_NAME = 64;

export function sanitizeToolName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, MAX_NAME);
}

function joined(prefix: string | undefined, name: string): string {
  return sanitizeToolName(prefix ? `${prefix}__${name}` : name);
}

export interface ServerTools {
  server: string;
  prefix?: string;
  /** Tool names as the server lists them. */
  tools: string[];
}

export interface NamingResult {
  /** server -> (tool name on the server -> name the model sees). */
  names: Map<string, Map<string, string>>;
  /** Tools left out because even the server-prefixed name was taken. */
  dropped: Array<{ server: string; tool: string; name: string }>;
}

/** Picks a unique exposed name for every tool; `reserved` are names other tools already hold. */
export function assignToolNames(servers: readonly ServerTools[], reserved: Iterable<string>): NamingResult {
  const taken = new Set(reserved);
  const counts = new Map<string, number>();
  for (const name of taken) counts.set(name, 1);
  for (const s of servers) {
    for (const tool of new Set(s.tools)) {
      const base = joined(s.prefix, tool);
      counts.set(base, (counts.get(base) ?? 0) + 1);
    }
  }
  const names = new Map<string, Map<string, string>>();
  const dropped: NamingResult["dropped"] = [];
  for (const s of servers) {
    const own = new Map<string, string>();
    for (const tool of new Set(s.tools)) {
      const base = joined(s.prefix, tool);
      const name = (counts.get(base) ?? 0) > 1 ? joined(s.server, base) : base;
      if (taken.has(name)) {
        dropped.push({ server: s.server, tool, name });
        continue;
      }
      taken.add(name);
      own.set(tool, name);
    }
    names.set(s.server, own);
  }
  return { names, dropped };
}
