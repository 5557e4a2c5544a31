import assert from "node:assert/strict";

/** Waits until `check` returns a truthy value (which it returns), or fails after `timeoutMs` naming `what`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000, what = "condition"): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last as NonNullable<T>;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
