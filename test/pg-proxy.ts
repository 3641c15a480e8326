// A loopback TCP proxy in front of a PostgreSQL server, for tests that make the connection fail in
// ways a real server or network does (a connection cut under a statement, a FATAL at a given moment).
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";

export interface PgProxy {
  /** `target` with the proxy's port: connect here to go through it. */
  url: string;
  close(): Promise<void>;
}

/** Each connection opens one to `target`; `carry` moves the bytes between the two sockets. */
export async function pgProxy(
  target: URL,
  carry: (client: Socket, upstream: Socket) => void,
): Promise<PgProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.on("error", () => {});
    upstream.on("error", () => {});
    carry(client, upstream);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = new URL(target);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}
