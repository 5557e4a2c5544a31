// Scenario 2: POST /f/:id/responses (five answers, completed) against raw single-row INSERTs of the same
// data with `pg` at the same concurrency.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { createUserWithKey, startTestSystem, type TestSystem } from "../../tests/support/system.ts";
import { cpuMeter, load, quantile, ratio } from "./common.ts";

/** The ingest scenario's form: five questions of five types. */
export const fiveBlocks = [
  { id: "a", key: "a", type: "SHORT_TEXT", question: "Name" },
  { id: "b", key: "b", type: "EMAIL", question: "Email" },
  { id: "c", key: "c", type: "NUMBER", question: "Age" },
  { id: "d", key: "d", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "p", text: "Pro" }] },
  { id: "e", key: "e", type: "LONG_TEXT", question: "Notes" },
];
/** One respondent's answers to `fiveBlocks`. */
export const fiveAnswers = { a: "Ada Lovelace", b: "ada@example.com", c: 36, d: "p", e: "Engines of analysis" };

/** Publishes a five-question form on `sys` and loads its response endpoint: figures, stored/s, CPU per request. */
export async function loadIngest(sys: TestSystem, connections: number, duration: number) {
  const ada = await createUserWithKey(sys, "bench@example.com");
  const form = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Ingest", document: { blocks: fiveBlocks } });
  await sys.cli("form:publish", "--id", form.body.id);
  const body = JSON.stringify({ answers: fiveAnswers, completed: true });
  const url = `${sys.url}/f/${form.body.id}/responses`;
  const headers = { "content-type": "application/json" };
  await load({ url, method: "POST", headers, body, connections, duration: 2 });
  // Stored responses are counted where they are stored: the form's responseCount follows them off the
  // respondent's path, within moments.
  const storedNow = async () => {
    const client = new pg.Client({ connectionString: sys.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(`select count(*)::int as "n" from submissions.responses where form_id = $1 and completed`, [form.body.id]);
      return rows[0].n as number;
    } finally {
      await client.end();
    }
  };
  const before = await storedNow();
  const cpu = cpuMeter(sys);
  const system = await load({ url, method: "POST", headers, body, connections, duration });
  const cpuMsPerRequest = cpu.perUnit(system.total);
  const stored = (await storedNow()) - before;
  return { formId: form.body.id as string, workspaceId: ada.workspace.id as string, system: { ...system, storedPerSecond: Math.round(stored / duration), cpuMsPerRequest } };
}

export async function ingest(opts: { connections?: number; seconds?: number } = {}) {
  const connections = opts.connections ?? 50;
  const duration = opts.seconds ?? 8;
  const sys = await startTestSystem("bench_ingest");
  try {
    const { formId, workspaceId, system } = await loadIngest(sys, connections, duration);

    // Ceiling: the same row inserted directly, `connections` clients at once.
    const pool = new pg.Pool({ connectionString: sys.databaseUrl, max: connections });
    const answers = JSON.stringify(fiveAnswers);
    const insert = async () => {
      const at = new Date();
      await pool.query(
        `insert into submissions.responses (id, form_id, workspace_id, version, completed, answers, hidden, country, created_at, updated_at, submitted_at)
         values ($1, $2, $3, 1, true, $4, '{}', null, $5, $5, $5)`,
        [randomUUID(), formId, workspaceId, answers, at],
      );
    };
    const latencies: number[] = [];
    const run = async (seconds: number, record: boolean) => {
      const end = performance.now() + seconds * 1000;
      let n = 0;
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (performance.now() < end) {
            const t = performance.now();
            await insert();
            if (record) latencies.push(performance.now() - t);
            n++;
          }
        }),
      );
      return n;
    };
    await run(1, false);
    const inserted = await run(duration, true);
    await pool.end();
    latencies.sort((a, b) => a - b);
    const rawInsert = {
      requestsPerSecond: Math.round(inserted / duration),
      p50ms: Math.round(quantile(latencies, 0.5) * 10) / 10,
      p99ms: Math.round(quantile(latencies, 0.99) * 10) / 10,
    };
    return {
      connections,
      durationSeconds: duration,
      system,
      rawInsert,
      ratio: ratio(system.requestsPerSecond, rawInsert.requestsPerSecond),
    };
  } finally {
    await sys.stop();
  }
}
