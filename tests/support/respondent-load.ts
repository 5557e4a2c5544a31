// A light, steady stream of respondents posting to one form, as a browser would, that keeps every
// answer it got: which responses were stored (2xx) and how each failure was answered.
import assert from "node:assert/strict";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import type { Received } from "./receiver.ts";
import type { apiClient } from "./system.ts";

type ApiCall = ReturnType<typeof apiClient>;

export interface LoadAnswer {
  /** When the POST was sent (Date.now()). */
  at: number;
  /** 0 when no HTTP answer came (connection refused or reset). */
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: any;
}

export interface RespondentLoad {
  /** The responseId of every POST answered 2xx, in order. */
  stored: string[];
  answers: LoadAnswer[];
  /** POSTs sent again after a connection error (with `retryOnce`). */
  retried: LoadAnswer[];
  /** When the POST now in flight (or the last one) was sent (ISO time). */
  readonly sentAt: string;
  /** Stops sending and waits for the POST in flight. */
  stop(): Promise<void>;
}

/**
 * With `retryOnce`, each POST carries an Idempotency-Key and one that got no answer (a keep-alive connection closed
 * under it) is sent once more with the same key, as a careful client does; the retry's answer is the one kept.
 */
export function startRespondentLoad(baseUrl: string, formId: string, everyMs = 50, options: { retryOnce?: boolean } = {}): RespondentLoad {
  const stored: string[] = [];
  const answers: LoadAnswer[] = [];
  const retried: LoadAnswer[] = [];
  const run = Math.random().toString(36).slice(2);
  let running = true;
  let sentAt = 0;
  const post = async (i: number): Promise<LoadAnswer> => {
    const at = Date.now();
    sentAt = at;
    try {
      const res = await fetch(`${baseUrl}/f/${formId}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(options.retryOnce ? { "idempotency-key": `load-${run}-${i}` } : {}) },
        body: JSON.stringify({ answers: { n: i }, completed: true }),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text: the assertions on content type will say what came back
      }
      return { at, status: res.status, retryAfter: res.headers.get("retry-after"), contentType: res.headers.get("content-type"), body };
    } catch (err) {
      return { at, status: 0, retryAfter: null, contentType: null, body: String((err as { cause?: unknown }).cause ?? err) };
    }
  };
  const loop = (async () => {
    for (let i = 0; running; i++) {
      let answer = await post(i);
      if (answer.status === 0 && options.retryOnce) {
        retried.push(answer);
        answer = await post(i);
      }
      answers.push(answer);
      if (answer.status >= 200 && answer.status < 300) stored.push(answer.body.responseId);
      const wait = answer.at + everyMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  return {
    stored,
    answers,
    retried,
    get sentAt() {
      return new Date(sentAt).toISOString();
    },
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Polls `request` every 50 ms from now until it answers 2xx; the seconds that took. */
export async function secondsUntilServed(request: () => Promise<Response>, timeoutMs = 120_000): Promise<number> {
  const began = performance.now();
  for (;;) {
    try {
      const res = await request();
      await res.arrayBuffer();
      if (res.ok) return (performance.now() - began) / 1000;
    } catch {
      // refused while the process is down
    }
    if (performance.now() - began > timeoutMs) throw new Error(`not served again within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Nothing answered 2xx was lost: every stored response is listed by the API, and delivered to `receiver`
 * (waited for, as delivery catches up).
 */
export async function assertStoredAndDelivered(api: ApiCall, formId: string, stored: string[], receiver: { received: Received[] }): Promise<void> {
  const listed = new Set<string>();
  for (let page = 1; ; page++) {
    const res = await api("GET", `/forms/${formId}/submissions?limit=100&page=${page}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const item of res.body.items) listed.add(item.id);
    if (!res.body.hasMore) break;
  }
  assert.deepEqual(stored.filter((id) => !listed.has(id)), [], "every response answered 2xx is stored");
  const missing = () => {
    const seen = new Set(receiver.received.filter((r) => r.status === 200).map((r) => r.body?.data?.responseId));
    return stored.filter((id) => !seen.has(id)).length;
  };
  await eventuallyPasses(async () => missing(), (n) => n === 0, 120_000, 250);
}
