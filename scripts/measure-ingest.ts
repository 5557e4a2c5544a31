// Responses stored per second through POST /f/:id/responses (completed, five answers) and p99.
// Usage: node scripts/measure-ingest.ts [connections=50] [seconds=10]
import autocannon from "autocannon";
import { createUserWithKey, startTestSystem } from "../tests/support/system.ts";

const connections = Number(process.argv[2] ?? 50);
const duration = Number(process.argv[3] ?? 10);
const sys = await startTestSystem("measure_ingest");
try {
  const ada = await createUserWithKey(sys, "bench@example.com");
  const form = await ada.api("POST", "/forms", {
    workspaceId: ada.workspace.id,
    name: "Ingest",
    document: {
      blocks: [
        { id: "a", key: "a", type: "SHORT_TEXT", question: "Name" },
        { id: "b", key: "b", type: "EMAIL", question: "Email" },
        { id: "c", key: "c", type: "NUMBER", question: "Age" },
        { id: "d", key: "d", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "p", text: "Pro" }] },
        { id: "e", key: "e", type: "LONG_TEXT", question: "Notes" },
      ],
    },
  });
  await sys.cli("form:publish", "--id", form.body.id);
  const body = JSON.stringify({
    answers: { a: "Ada Lovelace", b: "ada@example.com", c: 36, d: "p", e: "Engines of analysis" },
    completed: true,
  });
  const result = await autocannon({
    url: `${sys.url}/f/${form.body.id}/responses`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    connections,
    duration,
  });
  const stored = (await ada.api("GET", `/forms/${form.body.id}`)).body.responseCount;
  console.log(
    JSON.stringify({
      connections,
      requestsPerSecond: result.requests.average,
      storedPerSecond: Math.round(stored / duration),
      stored,
      p50ms: result.latency.p50,
      p99ms: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
    }),
  );
} finally {
  await sys.stop();
}
