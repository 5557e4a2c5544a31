// Paging at depth: a form with 200,000 responses (written straight into Postgres with one INSERT ... SELECT
// generate_series), then the submissions page at offset 100,000 read by `page` (OFFSET) and the same page
// by `cursor` (keyset), through the API (gateway, submissions, Postgres) and as the bare SQL of each; the
// median of several interleaved runs. Both reads must return the same rows.
//
//   node scripts/bench/paging.ts [--rows 200000] [--offset 100000] [--limit 50] [--runs 15]
import assert from "node:assert/strict";
import pg from "pg";
import { encodeCursor } from "@formsvc/platform/paging.ts";
import { createUserWithKey, startTestSystem } from "../../tests/support/system.ts";

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (ms: number) => Math.round(ms * 100) / 100;

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const began = performance.now();
  const value = await run();
  return { ms: performance.now() - began, value };
}

export async function benchPaging(opts: { rows: number; offset: number; limit: number; runs: number }) {
  const { rows, offset, limit, runs } = opts;
  assert.equal(offset % limit, 0, "the offset must start a page");
  const sys = await startTestSystem("bench_paging");
  const db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
  try {
    const owner = await createUserWithKey(sys, "bench-paging@example.com");
    const form = await owner.api("POST", "/forms", {
      workspaceId: owner.workspace.id,
      name: "Deep",
      document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "n" }] },
    });
    const formId = form.body.id as string;
    await sys.cli("form:publish", "--id", formId);

    // One response through the hosted form, whose stored row the others copy (answers as submissions keeps them).
    const saved = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { n: 42 }, completed: true }),
    });
    assert.equal(saved.status, 200);
    const { responseId } = (await saved.json()) as { responseId: string };
    // Whole milliseconds apart, as the API's timestamps (and cursors) are; all older than the model row.
    const fill = await timed(() =>
      db.query(
        `insert into submissions.responses ("id", "form_id", "workspace_id", "version", "completed", "answers", "hidden", "country", "created_at", "updated_at", "submitted_at")
         select 'b' || lpad(g::text, 15, '0'), r."form_id", r."workspace_id", r."version", true, r."answers", r."hidden", r."country", t, t, t
         from submissions.responses as r, generate_series(1, $2::int - 1) as g,
           lateral (select timestamptz '2026-01-01T00:00:00Z' + g * interval '1 millisecond' as t) as at
         where r."id" = $1`,
        [responseId, rows],
      ),
    );
    await db.query("analyze submissions.responses");

    // The row just before the page (newest first): the position the previous page's nextCursor names.
    const before = (await db.query(`select "id", "created_at" from submissions.responses where "form_id" = $1 order by "created_at" desc, "id" desc offset $2 limit 1`, [formId, offset - 1])).rows[0];
    const cursor = encodeCursor({ at: before.created_at, id: before.id });
    const byOffset = `/forms/${formId}/submissions?limit=${limit}&page=${offset / limit + 1}`;
    const byCursor = `/forms/${formId}/submissions?limit=${limit}&cursor=${cursor}`;
    const offsetSql = `select "id" from submissions.responses where "form_id" = $1 order by "created_at" desc, "id" desc offset ${offset} limit ${limit + 1}`;
    const keysetSql = `select "id" from submissions.responses where "form_id" = $1 and ("created_at", "id") < ($2, $3) order by "created_at" desc, "id" desc limit ${limit + 1}`;

    const first = await Promise.all([owner.api("GET", byOffset), owner.api("GET", byCursor)]);
    for (const answer of first) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(
      first[0].body.items.map((s: { id: string }) => s.id),
      first[1].body.items.map((s: { id: string }) => s.id),
      "the same page both ways",
    );

    // Timed without apiClient's check of each answer against the OpenAPI document (done above, once).
    const get = async (path: string) => {
      const res = await fetch(`${sys.url}/api/v1${path}`, { headers: { authorization: `Bearer ${owner.key}` } });
      assert.equal(res.status, 200);
      return res.arrayBuffer();
    };
    const times = { apiOffset: [] as number[], apiCursor: [] as number[], sqlOffset: [] as number[], sqlKeyset: [] as number[] };
    for (let run = 0; run < runs; run++) {
      times.apiOffset.push((await timed(() => get(byOffset))).ms);
      times.apiCursor.push((await timed(() => get(byCursor))).ms);
      times.sqlOffset.push((await timed(() => db.query(offsetSql, [formId]))).ms);
      times.sqlKeyset.push((await timed(() => db.query(keysetSql, [formId, before.created_at, before.id]))).ms);
    }
    const medians = Object.fromEntries(Object.entries(times).map(([name, ms]) => [name, round(median(ms))])) as Record<keyof typeof times, number>;
    return {
      rows,
      offset,
      limit,
      runs,
      fillSeconds: round(fill.ms / 1000),
      medianMs: medians,
      apiOffsetOverCursor: round(medians.apiOffset / medians.apiCursor),
      sqlOffsetOverKeyset: round(medians.sqlOffset / medians.sqlKeyset),
    };
  } finally {
    await db.end();
    await sys.stop();
  }
}

if (import.meta.main) {
  const arg = (flag: string, fallback: number) => {
    const i = process.argv.indexOf(flag);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const result = await benchPaging({ rows: arg("--rows", 200_000), offset: arg("--offset", 100_000), limit: arg("--limit", 50), runs: arg("--runs", 15) });
  console.log(`paging ${JSON.stringify(result)}`);
}
