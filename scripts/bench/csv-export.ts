// `node scripts/bench/csv-export.ts [responses]` (100,000 by default): the memory a CSV export takes. The
// responses go straight into submissions' table (INSERT ... SELECT from generate_series, no respondent traffic), then the
// app's export is downloaded and counted without keeping it (the summary's time is printed too). Prints each process's RSS before, at its peak
// while exporting, and after, with the rows and bytes received. A check of constant memory, not a timing:
// the gateway's and submissions' peaks should not grow with the number of responses.
import assert from "node:assert/strict";
import pg from "pg";
import { appClient, type Cookies } from "../../tests/support/app-client.ts";
import { startTestSystem, type TestSystem } from "../../tests/support/system.ts";
import { rssOf, sampleRss, sleep } from "./common.ts";

/** A signed-up owner's published form of four questions with `responses` completed responses stored straight into submissions' table. */
export async function benchFormWithResponses(sys: TestSystem, responses: number) {
  const { call, cookies } = appClient(sys.url);
  await call("GET", "/session");
  assert.equal((await call("POST", "/auth/signup", { email: "bench@example.com", name: "Bench", password: "correct horse battery" })).status, 201);
  const workspace = (await call("GET", "/workspaces")).body.items[0];
  const document = {
    title: "Bench",
    blocks: [
      { id: "name", key: "name", type: "SHORT_TEXT", question: "Name" },
      { id: "age", key: "age", type: "NUMBER", question: "Age" },
      { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
      { id: "about", key: "about", type: "LONG_TEXT", question: "About you" },
    ],
  };
  const form = (await call("POST", "/forms", { workspaceId: workspace.id, name: "Bench", document })).body;
  assert.equal((await call("POST", `/forms/${form.id}/publish`, {})).status, 200);

  const db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
  const answer = (key: string, type: string, label: string, value: string) =>
    `'${key}', jsonb_build_object('questionId', '${key}', 'type', '${type}', 'label', '${label}', 'value', ${value})`;
  // In statements of 100,000 rows: each is one pass of the summary's trigger over its rows, held in memory a chunk at a time.
  const chunk = 100_000;
  for (let from = 1; from <= responses; from += chunk) {
    await db.query(
      `insert into "submissions"."responses" ("id", "form_id", "workspace_id", "version", "completed", "answers", "hidden", "country", "created_at", "updated_at", "submitted_at")
       select 'bench' || lpad(i::text, 8, '0'), $1, $2, 1, true,
              jsonb_build_object(${answer("name", "SHORT_TEXT", "Name", "'Respondent ' || i")},
                                 ${answer("age", "NUMBER", "Age", "to_jsonb(18 + i % 60)")},
                                 ${answer("plan", "MULTIPLE_CHOICE", "Plan", "to_jsonb(case when i % 3 = 0 then 'pro' else 'free' end)")},
                                 ${answer("about", "LONG_TEXT", "About you", "to_jsonb(repeat('Some words about me. ', 10))")}),
              '{}'::jsonb, null, t, t, t
         from generate_series($3::int, $4::int) i, lateral (select now() - make_interval(secs => i) as t) at`,
      [form.id, workspace.id, from, Math.min(from + chunk - 1, responses)],
    );
  }
  // Statistics, as autovacuum gathers them within a minute of such a load: without them the planner may sort
  // the whole form for each of the export's keyset batches.
  await db.query(`analyze "submissions"."responses"`);
  await db.end();
  return { formId: form.id as string, call, cookies };
}

/** Downloads the form's CSV export, counting it without keeping it: its time, size and each process's RSS before, at peak and after. */
export async function measureCsvExport(sys: TestSystem, formId: string, cookies: Cookies, responses: number) {
  await sleep(1000);
  const before = rssOf(sys);
  const sampler = sampleRss(sys);
  const started = Date.now();
  const res = await fetch(`${sys.url}/app/api/forms/${formId}/submissions.csv?filter=completed`, { headers: { cookie: cookies.header() } });
  assert.equal(res.status, 200);
  let bytes = 0;
  let lines = 0;
  const reader = res.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    bytes += read.value.length;
    for (const byte of read.value) if (byte === 10) lines++;
  }
  const seconds = (Date.now() - started) / 1000;
  const peak = sampler.stop();
  const after = rssOf(sys);
  // The header, then one line per response (no answer here holds a line break).
  assert.equal(lines, responses + 1, "every response exported");
  return { rows: lines - 1, megabytes: Math.round(bytes / 1024 / 102.4) / 10, seconds, rssMiB: { before, peak, after } };
}

export async function csvExport(responses = 100_000) {
  const sys = await startTestSystem("bench_csv_export");
  try {
    const { formId, call, cookies } = await benchFormWithResponses(sys, responses);
    // The summary over the same responses, counted by Postgres: how long one read takes.
    const summaryStarted = Date.now();
    const summary = await call("GET", `/forms/${formId}/summary`);
    const summaryMs = Date.now() - summaryStarted;
    assert.equal(summary.body.responses, responses);
    return { responses, summaryMs, ...(await measureCsvExport(sys, formId, cookies, responses)) };
  } finally {
    await sys.stop();
  }
}

if (import.meta.main) {
  const responses = Number(process.argv[2] ?? 100_000);
  const result = await csvExport(responses);
  console.log(`summary of ${result.responses} responses in ${result.summaryMs} ms`);
  console.log(`exported ${result.rows} responses (${result.megabytes} MB) in ${result.seconds} s`);
  console.log("RSS in MiB, per process: before / peak while exporting / after");
  for (const name of Object.keys(result.rssMiB.before)) {
    console.log(`  ${name.padEnd(14)} ${result.rssMiB.before[name]} / ${result.rssMiB.peak[name]} / ${result.rssMiB.after[name]}`);
  }
}
