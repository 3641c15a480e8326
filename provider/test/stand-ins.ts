// HTTP servers on loopback standing in for what may answer at service_url instead of Vigil: a login
// page (a single sign-on proxy answering 200 text/html to everything), another JSON service, a
// listener that never answers. Each records the requests it got, so a test can wait for one.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

const LOGIN_PAGE = "<html>Sign in</html>";

type Answer = { status: number; type: string; body: string } | null;

export interface StandIn {
  url: string;
  requests: IncomingMessage[];
  /** Resolves once the server has received `count` requests in all. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

/** A server answering every request with `answer` (null: never answers). */
export async function standIn(answer: Answer): Promise<StandIn> {
  const requests: IncomingMessage[] = [];
  const waiting: (() => void)[] = [];
  const server = createServer((request, response) => {
    requests.push(request);
    for (const check of waiting.splice(0)) check();
    if (answer) response.writeHead(answer.status, { "content-type": answer.type }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    received: (count) =>
      new Promise<void>((resolve) => {
        const check = () => (requests.length >= count ? resolve() : waiting.push(check));
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const loginPage = () => standIn({ status: 200, type: "text/html", body: LOGIN_PAGE });
export const silentListener = () => standIn(null);
