import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer, type Socket } from "node:net";

/** What a drain ended with. */
export interface DrainResult {
  /** Connections still open at the limit, closed with whatever they were doing. */
  cut: number;
  ms: number;
}

/**
 * Stopping an HTTP/1.1 server without failing a request it accepted. Set up right after the server is created;
 * the returned `drain` then:
 * - stops listening (new connections are refused: a load balancer or client sends them elsewhere or again);
 * - answers every request in flight, and every request that still comes on an open keep-alive connection,
 *   with `Connection: close`, so that each connection closes as soon as its response is sent;
 * - leaves an idle keep-alive connection to its keep-alive timeout (advertised in `Keep-Alive: timeout=5`;
 *   clients that heed it, such as undici and fetch, close first). `http.Server.close()` would close idle
 *   connections at once instead, racing a client that is sending its next request on one: that request would
 *   fail with a reset although the server never saw it.
 * - resolves when every connection has closed, or at `limitMs`, when it closes those left.
 */
export function drainable(server: Server): (limitMs: number) => Promise<DrainResult> {
  let draining = false;
  const sockets = new Set<Socket>();
  const inFlight = new Set<ServerResponse>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // Before the application's own listener, so that a response it sends at once carries the header too.
  server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.setHeader("connection", "close");
    inFlight.add(res);
    res.once("close", () => inFlight.delete(res));
  });

  let drained: Promise<DrainResult> | undefined;
  return (limitMs) =>
    (drained ??= new Promise<DrainResult>((resolve) => {
      const began = performance.now();
      draining = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader("connection", "close");
      let timer: NodeJS.Timeout | undefined;
      const done = (cut: number) => {
        clearTimeout(timer);
        resolve({ cut, ms: Math.round(performance.now() - began) });
      };
      // net.Server's close: stop listening, call back once every connection has closed (see above).
      NetServer.prototype.close.call(server, () => done(0));
      timer = setTimeout(() => {
        const cut = sockets.size;
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        done(cut);
      }, limitMs);
      timer.unref();
    }));
}
