// Requests/s and p99 of an authenticated GET /api/v1/forms/:id against a freshly started system.
// Usage: node scripts/measure-api-read.ts [connections=32] [seconds=10]
import autocannon from "autocannon";
import { createUserWithKey, startTestSystem } from "../tests/support/system.ts";

const connections = Number(process.argv[2] ?? 32);
const duration = Number(process.argv[3] ?? 10);
const sys = await startTestSystem("measure");
try {
  const ada = await createUserWithKey(sys, "bench@example.com");
  const form = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Bench" });
  const result = await autocannon({
    url: `${sys.url}/api/v1/forms/${form.body.id}`,
    headers: { authorization: `Bearer ${ada.key}` },
    connections,
    duration,
  });
  console.log(
    JSON.stringify({
      connections,
      requestsPerSecond: result.requests.average,
      p50ms: result.latency.p50,
      p99ms: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
    }),
  );
} finally {
  await sys.stop();
}
