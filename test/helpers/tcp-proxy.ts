import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy the test can cut and restore, to take a real database away from
 * a running server without touching the database itself.
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  /** `delayMs`: every chunk is passed on that much later, in order (a slow network). */
  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
    private readonly delayMs = 0,
  ) {}

  async start(port = 0): Promise<number> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      if (this.delayMs === 0) client.pipe(upstream).pipe(client);
      else {
        const later = (to: net.Socket) => (chunk: Buffer) =>
          setTimeout(() => to.writable && to.write(chunk), this.delayMs);
        client.on('data', later(upstream));
        upstream.on('data', later(client));
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this.port;
  }

  /**
   * Go silent on every open connection: nothing more is passed either way and nothing is
   * closed (a hung server or a black-holed network). New connections still pass.
   */
  freeze(): void {
    for (const s of this.sockets) s.pause();
  }

  /** Refuse new connections and drop every open one. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
    this.server = undefined;
  }
}
