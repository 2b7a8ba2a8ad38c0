/** HTTP plumbing of the fake's REST side: route matching, Discord's bucket keys, bodies and answers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseMultipart, type UploadedPart } from "./files.js";
import type { Route } from "./messages.js";

export function findRoute(
  routes: Route[],
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | undefined {
  const parts = path.split("/").filter(Boolean);
  for (const route of routes) {
    if (route.method !== method) continue;
    const want = route.path.split("/").filter(Boolean);
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const hit = want.every((w, i) => {
      const got = decodeURIComponent(parts[i] as string);
      if (w.startsWith(":")) params[w.slice(1)] = got;
      return w.startsWith(":") || w === got;
    });
    if (hit) return { route, params };
  }
  return undefined;
}

/** Discord's buckets: the route, per major parameter (channel, guild, webhook or interaction). */
export function bucketKey(route: Route, params: Record<string, string>, method: string): string {
  const major = params.channel ?? params.guild ?? params.interaction ?? params.token ?? "";
  return `${method} ${route.path} ${major}`;
}

/** A request's JSON body (a multipart body's `payload_json`), and a multipart body's parts. */
export async function readBody(req: IncomingMessage): Promise<{ body: unknown; parts: UploadedPart[] }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("multipart/form-data")) {
    const parts = parseMultipart(raw, type);
    const json = parts.find((p) => p.field === "payload_json");
    return { body: json ? JSON.parse(json.data.toString("utf8")) : {}, parts };
  }
  return { body: parseJson(raw.toString("utf8")), parts: [] };
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return { _raw: text };
  }
}

export function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded) return;
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
