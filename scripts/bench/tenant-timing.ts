// Whether the time of a 404 tells a missing record from another tenant's (issue 34's probe: another tenant's
// webhook answered in 58-71 ms, a made-up id in 30-35 ms). One system, two tenants; Mallory reads Ada's form
// and webhook ids and made-up ones, interleaved, and the script prints each kind's median and p90 and the
// ratio of another tenant's to a missing one (1.00: the time tells nothing).
//   node scripts/bench/tenant-timing.ts [--rounds 300]
import { parseArgs } from "node:util";
import { createUserWithKey, startTestSystem } from "../../tests/support/system.ts";
import { quantile } from "./common.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "300" } } });
const rounds = Number(values.rounds);

// The webhook is disabled and points at loopback: nothing is ever sent to it.
const sys = await startTestSystem("bench_tenant_timing", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
try {
  const ada = await createUserWithKey(sys, "ada-timing@example.com");
  const mallory = await createUserWithKey(sys, "mallory-timing@example.com");
  const form = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Ada's" });
  const hook = await ada.api("POST", "/webhooks", { formId: form.body.id, url: "http://127.0.0.1:9/in", enabled: false });
  if (form.status !== 201 || hook.status !== 201) throw new Error(`setup failed: ${form.status} ${hook.status}`);
  const kinds = {
    "form, another tenant's": `/forms/${form.body.id}`,
    "form, missing": "/forms/doesNotExist0000",
    "webhook, another tenant's": `/webhooks/${hook.body.id}`,
    "webhook, missing": "/webhooks/doesNotExist0000",
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
  for (let round = -20; round < rounds; round++) {
    for (const [kind, path] of Object.entries(kinds)) {
      const started = performance.now();
      const res = await mallory.api("GET", path);
      const ms = performance.now() - started;
      if (res.status !== 404) throw new Error(`${kind}: ${res.status}`);
      // The first rounds warm connections and the JIT up.
      if (round >= 0) times[kind]!.push(ms);
    }
  }
  const stats = (kind: string) => {
    const sorted = [...times[kind]!].sort((a, b) => a - b);
    return { p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9) };
  };
  console.log(`404 times over ${rounds} rounds (ms), Mallory's key:`);
  for (const kind of Object.keys(kinds)) {
    const { p50, p90 } = stats(kind);
    console.log(`  ${kind.padEnd(26)} p50 ${p50.toFixed(2).padStart(6)}  p90 ${p90.toFixed(2).padStart(6)}`);
  }
  for (const record of ["form", "webhook"]) {
    const theirs = stats(`${record}, another tenant's`);
    const missing = stats(`${record}, missing`);
    console.log(`  ${record}: another tenant's / missing  p50 ${(theirs.p50 / missing.p50).toFixed(2)}  p90 ${(theirs.p90 / missing.p90).toFixed(2)}`);
  }
} finally {
  await sys.stop();
}
