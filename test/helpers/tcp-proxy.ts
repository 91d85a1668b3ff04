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
  close(): Promise<void>;
}

export async function startTcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let port = 0;
  let server: Server | undefined;
  const listen = async () => {
    if (server) return;
    const next = createServer((client) => {
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
  await listen();
  return { url: `http://127.0.0.1:${port}`, cut, restore: listen, close: cut };
}
