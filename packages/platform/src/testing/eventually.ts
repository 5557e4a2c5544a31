import assert from "node:assert/strict";

/** Reads `read` every `stepMs` until its value passes `ok`, and returns that value; fails after `timeoutMs` naming `what` and the last value. */
async function poll<T>(read: () => Promise<T> | T, ok: (value: T) => boolean, timeoutMs: number, stepMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!ok(last)) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, stepMs));
    last = await read();
  }
  return last;
}

/** Waits until `check` returns a truthy value (which it returns), or fails after `timeoutMs` naming `what`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, what = "condition"): Promise<NonNullable<T>> {
  return (await poll(check, Boolean, timeoutMs, 25, what)) as NonNullable<T>;
}

/** Reads `read` until its value passes `ok` (every 200 ms: a read that costs the system something, such as an API call). */
export function eventuallyPasses<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000, stepMs = 200): Promise<T> {
  return poll(read, ok, timeoutMs, stepMs, "a value that passes");
}
