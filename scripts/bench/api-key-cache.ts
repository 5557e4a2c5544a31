// API read (authenticated GET /api/v1/forms/:id, 64 connections) with identity's API key cache on and off
// (API_KEY_CACHE), interleaved over rounds so a machine that speeds up or slows down moves both alike.
// `node scripts/bench/api-key-cache.ts [--rounds N] [--seconds S]`; prints req/s of each and the ratio.
import { createUserWithKey, startTestSystem } from "../../tests/support/system.ts";
import { load, ratio } from "./common.ts";

async function apiReadWith(apiKeyCache: "on" | "off", connections: number, duration: number): Promise<number> {
  const sys = await startTestSystem(`bench_api_key_cache_${apiKeyCache}`, { API_KEY_CACHE: apiKeyCache });
  try {
    const ada = await createUserWithKey(sys, "bench@example.com");
    const form = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      name: "Bench",
      document: { blocks: [{ id: "a", key: "a", type: "SHORT_TEXT", question: "Name" }] },
    });
    const url = `${sys.url}/api/v1/forms/${form.body.id}`;
    const headers = { authorization: `Bearer ${ada.key}` };
    // A short warm-up so the JIT and connection pools are not measured cold.
    await load({ url, headers, connections, duration: 2 });
    return (await load({ url, headers, connections, duration })).requestsPerSecond;
  } finally {
    await sys.stop();
  }
}

export async function apiKeyCache(opts: { rounds?: number; seconds?: number; connections?: number } = {}) {
  const rounds = opts.rounds ?? 2;
  const seconds = opts.seconds ?? 8;
  const connections = opts.connections ?? 64;
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < rounds; round++) {
    off.push(await apiReadWith("off", connections, seconds));
    on.push(await apiReadWith("on", connections, seconds));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return { connections, seconds, rounds, requestsPerSecond: { off, on }, ratioOnToOff: ratio(mean(on), mean(off)) };
}

if (import.meta.main) {
  const arg = (flag: string, fallback: number) => {
    const i = process.argv.indexOf(flag);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const result = await apiKeyCache({ rounds: arg("--rounds", 2), seconds: arg("--seconds", 8) });
  const round = (xs: number[]) => xs.map((x) => Math.round(x)).join(", ");
  console.log(`api read req/s, API_KEY_CACHE=off: ${round(result.requestsPerSecond.off)}; on: ${round(result.requestsPerSecond.on)}; ratio on/off ${result.ratioOnToOff}`);
  console.log(`api-key-cache ${JSON.stringify(result)}`);
}
