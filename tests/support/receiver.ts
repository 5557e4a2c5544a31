import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: IncomingHttpHeaders;
  /** The raw bytes as they arrived, before any parsing. */
  raw: Buffer;
  body: any;
  at: number;
  /** The status this receiver answered with. */
  status?: number;
}

/** One reply: status and headers, after a delay (to time out) or once `heldUntil` settles (to order it after a test's step). */
export interface Reply {
  status: number;
  delayMs?: number;
  heldUntil?: Promise<unknown>;
  body?: string;
  headers?: Record<string, string>;
}

/** A real HTTP receiver on loopback; `answer` decides each reply. */
export async function startReceiver(answer: (req: Received, n: number) => Reply = () => ({ status: 200 })) {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  // Requests being answered, per eventId: the most ever at once says whether two senders overlapped.
  const inFlight = new Map<string, number>();
  let maxInFlightPerEvent = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = undefined;
      }
      const entry: Received = { headers: req.headers, raw, body, at: Date.now() };
      const eventId = (body as { eventId?: string } | undefined)?.eventId;
      if (eventId) {
        const now = (inFlight.get(eventId) ?? 0) + 1;
        inFlight.set(eventId, now);
        maxInFlightPerEvent = Math.max(maxInFlightPerEvent, now);
        res.once("close", () => {
          const left = (inFlight.get(eventId) ?? 1) - 1;
          if (left) inFlight.set(eventId, left);
          else inFlight.delete(eventId);
        });
      }
      received.push(entry);
      for (const w of waiters.filter((w) => received.length >= w.count)) w.resolve();
      const reply = answer(entry, received.length);
      entry.status = reply.status;
      const send = () => {
        if (!res.destroyed) res.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers }).end(reply.body ?? "ok");
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else if (reply.heldUntil) void reply.heldUntil.finally(send);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    /** The most requests ever in flight at once for one eventId (1 when no two attempts overlapped). */
    get maxInFlightPerEvent() {
      return maxInFlightPerEvent;
    },
    /** Resolves once `count` requests have arrived, or rejects after `timeoutMs`. */
    waitFor(count: number, timeoutMs = 30_000): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${count} requests`)), timeoutMs);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
