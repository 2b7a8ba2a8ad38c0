/**
 * A TCP proxy in front of PostgreSQL that can go silent: it keeps every connection open but
 * passes nothing either way, as a network partition does (no reset, no error, just silence).
 * It can also single out the connections that sent a given text (a replica's broadcast
 * connection sent `LISTEN …`): `sever` cuts them, and any that sends it later, until `mend()`;
 * `mute` makes only them go silent.
 */
import net from "node:net";

export class PartitionProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private silent = false;
  /** Text that marks a connection to cut, while severing. */
  private severing: string | undefined;
  /** What each client sent so far (its first 64 KiB), with the socket upstream. */
  private readonly sent = new Map<net.Socket, { text: string; upstream: net.Socket }>();
  /** Connections cut by `sever`. */
  severed = 0;
  /** Text that marks a connection to silence. */
  private muting: string | undefined;

  private constructor(target: URL) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(from);
        from.on("data", (chunk: Buffer) => {
          if (from === client && this.record(client, upstream, chunk)) return this.cut(client);
          if (!this.silent && !this.muted(client)) to.write(chunk);
        });
        from.on("error", () => to.destroy());
        from.on("close", () => {
          this.sockets.delete(from);
          this.sent.delete(from);
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

  /** Cuts every connection that sent `text` (a reset, as when a server ends it), and any later one as it sends it. */
  sever(text: string): void {
    this.severing = text;
    for (const [client, { text: sent }] of [...this.sent]) if (sent.includes(text)) this.cut(client);
  }

  /** Connections that sent `text` go silent both ways, with no error (a half-open connection). */
  mute(text: string): void {
    this.muting = text;
  }

  private muted(client: net.Socket): boolean {
    return this.muting !== undefined && (this.sent.get(client)?.text.includes(this.muting) ?? false);
  }

  /** Stops cutting and muting: connections that send the text pass again. */
  mend(): void {
    this.severing = undefined;
    this.muting = undefined;
  }

  /** Notes what `client` sent; true when it is to be cut now. */
  private record(client: net.Socket, upstream: net.Socket, chunk: Buffer): boolean {
    const entry = this.sent.get(client) ?? { text: "", upstream };
    if (entry.text.length < 65_536) entry.text += chunk.toString("latin1");
    this.sent.set(client, entry);
    return this.severing !== undefined && entry.text.includes(this.severing);
  }

  private cut(client: net.Socket): void {
    this.severed++;
    this.sent.get(client)?.upstream.destroy();
    this.sent.delete(client);
    client.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
