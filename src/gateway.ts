/**
 * The gateway: one process that owns the HTTP server and, as later parts land, the harness,
 * the binding store and the channels. `createGateway` wires them from a loaded config.
 */
import type { LoadedConfig } from "./config/loader.js";
import type { Logger } from "./log/logger.js";
import { HttpServer, sendJson } from "./server/http.js";

export interface GatewayOptions {
  loaded: LoadedConfig;
  logger: Logger;
}

export interface Gateway {
  readonly server: HttpServer;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createGateway(options: GatewayOptions): Gateway {
  const { config } = options.loaded;
  const logger = options.logger;
  const server = new HttpServer({ host: config.server.host, port: config.server.port, logger });
  server.route("GET", "/healthz", (_req, res) => sendJson(res, 200, { ok: true }));

  return {
    server,
    async start() {
      const addr = await server.listen();
      logger.info({ host: addr.address, port: addr.port }, "antler listening");
    },
    async stop() {
      await server.close();
      logger.info("antler stopped");
    },
  };
}
