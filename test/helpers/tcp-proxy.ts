import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server, to take it off the network and bring it back on the same port: how a test makes
 * an upstream "go away" while the process behind it (and its database) lives on.
 */
export interface TcpProxy {
  url: string;
  /** Refuses connections from now on and cuts the open ones. */
  cut(): Promise<void>;
  /** Accepts connections again, on the same port (nothing when it already does). */
  restore(): Promise<void>;
  /**
   * Cuts the open connections and, from now on, accepts new ones but passes nothing through them, as a host that is
   * gone without a word does (a network partition, a failed-over address) until `restore`.
   */
  blackhole(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let port = 0;
  let server: Server | undefined;
  let silent = false;
  const listen = async () => {
    silent = false;
    if (server) return;
    const next = createServer((client) => {
      if (silent) {
        sockets.add(client);
        client.on('close', () => sockets.delete(client));
        client.on('error', () => client.destroy());
        return;
      }
      const upstream = connect(Number(target.port), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => next.listen(port, '127.0.0.1', resolve));
    port = (next.address() as { port: number }).port;
    server = next;
  };
  const cut = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  const blackhole = () => {
    silent = true;
    for (const socket of sockets) socket.destroy();
  };
  await listen();
  return { url: `http://127.0.0.1:${port}`, cut, restore: listen, blackhole, close: cut };
}
