/**
 * A stand-in for DeerFlow's gateway route of a thread's files,
 * `GET /api/threads/{thread_id}/artifacts/{path}`, on 127.0.0.1, plus `GET /plain/{name}` for
 * artifacts given as URLs. Files are kept by virtual path (`/mnt/user-data/outputs/a.pdf`) or,
 * for `/plain`, by name. It records every request with its headers, so a test sees which
 * requests carried credentials. `hang` holds paths it never answers; `redirects` sends a path
 * elsewhere with a 302.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ArtifactRequest {
  /** The path as requested, decoded. */
  path: string;
  threadId?: string;
  headers: IncomingHttpHeaders;
}

export interface ArtifactRoute {
  /** The origin, e.g. http://127.0.0.1:PORT. */
  origin: string;
  /** The template Antler fetches presented paths with (`remote.artifacts.url`). */
  template: string;
  files: Map<string, Uint8Array>;
  hang: Set<string>;
  redirects: Map<string, string>;
  requests: ArtifactRequest[];
  close(): Promise<void>;
}

const ROUTE = /^\/api\/threads\/([^/]+)\/artifacts(\/.*)$/;

export async function startArtifactRoute(): Promise<ArtifactRoute> {
  const files = new Map<string, Uint8Array>();
  const hang = new Set<string>();
  const redirects = new Map<string, string>();
  const requests: ArtifactRequest[] = [];
  const server = createServer((req, res) => {
    const raw = new URL(req.url ?? "/", "http://x").pathname;
    const routed = ROUTE.exec(raw);
    const key = routed ? decodeURIComponent(routed[2] ?? "") : decodeURIComponent(raw.replace(/^\/plain\//, ""));
    requests.push({ path: key, headers: req.headers, ...(routed ? { threadId: decodeURIComponent(routed[1] ?? "") } : {}) });
    if (hang.has(key)) return; // never answers
    const to = redirects.get(key);
    if (to) {
      res.writeHead(302, { location: to }).end();
      return;
    }
    const data = files.get(key);
    if (!data) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"detail":"Artifact not found"}');
      return;
    }
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": data.byteLength }).end(data);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    template: `${origin}/api/threads/{thread_id}/artifacts/{path}`,
    files,
    hang,
    redirects,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
