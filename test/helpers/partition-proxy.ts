/**
 * A TCP proxy in front of PostgreSQL that can go silent: it keeps every connection open but
 * passes nothing either way, as a network partition does (no reset, no error, just silence).
 */
import net from "node:net";

export class PartitionProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private silent = false;

  private constructor(target: URL) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(from);
        from.on("data", (chunk) => {
          if (!this.silent) to.write(chunk);
        });
        from.on("error", () => to.destroy());
        from.on("close", () => {
          this.sockets.delete(from);
          to.destroy();
        });
      }
    });
  }

  static async start(url: string): Promise<{ proxy: PartitionProxy; url: string }> {
    const target = new URL(url);
    const proxy = new PartitionProxy(target);
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve));
    const through = new URL(url);
    through.host = `127.0.0.1:${(proxy.server.address() as net.AddressInfo).port}`;
    return { proxy, url: through.toString() };
  }

  blackhole(): void {
    this.silent = true;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
