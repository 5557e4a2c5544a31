// Scenario: the database's bytes per response, by table, as an operator's system grows: one form of five
// questions with two webhooks answering 200, `total` responses through the hosted endpoint at `perSecond`,
// measured once every delivery has arrived and internal rows have had their retention pass: deliveries keep
// their default 90 days, the outbox and sent mail go at once (RETENTION_SAFETY_SECONDS=1, a pass every 2 s),
// so what stays is what a steady system keeps per response for 90 days. A tree from before retention ignores
// those settings and keeps everything. A partitioned table counts as the sum of its partitions.
import pg from "pg";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "../../tests/support/receiver.ts";
import { createUserWithKey, startTestSystem } from "../../tests/support/system.ts";
import { sleep } from "./common.ts";
import { makeHookedForm, submitPaced } from "./delivery.ts";
import { fiveAnswers, fiveBlocks } from "./ingest.ts";

/** Every table of the services' schemas with its bytes (indexes and TOAST in), partitions summed. */
async function tableBytes(databaseUrl: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ table: string; bytes: string }>(
      `select n."nspname" || '.' || coalesce(parent."relname", c."relname") as "table", sum(pg_total_relation_size(c."oid"))::bigint::text as "bytes"
       from pg_class c join pg_namespace n on n."oid" = c."relnamespace"
       left join pg_inherits i on i."inhrelid" = c."oid" left join pg_class parent on parent."oid" = i."inhparent"
       where c."relkind" = 'r' and n."nspname" in ('identity', 'forms', 'submissions', 'webhooks', 'delivery')
       group by 1`,
    );
    return Object.fromEntries(rows.map((r) => [r.table, Number(r.bytes)]));
  } finally {
    await client.end();
  }
}

export async function storage(opts: { total?: number; perSecond?: number } = {}) {
  const total = opts.total ?? 20_000;
  const perSecond = opts.perSecond ?? 400;
  const sys = await startTestSystem("bench_storage", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", RETENTION_SAFETY_SECONDS: "1", RETENTION_INTERVAL_SECONDS: "2" });
  const receivers = [await startReceiver(), await startReceiver()];
  try {
    const ada = await createUserWithKey(sys, "storage@example.com");
    const formId = await makeHookedForm(sys, ada, receivers.map((r) => r.url), "Storage", fiveBlocks);
    const empty = await tableBytes(sys.databaseUrl);
    await submitPaced(sys, [formId], total, perSecond, { body: () => ({ answers: fiveAnswers, completed: true }) });
    await eventuallyPasses(async () => Math.min(...receivers.map((r) => r.received.length)), (n) => n >= total, 600_000, 200);
    // The embedded stream acknowledges its cursor every 5 s; then a retention pass (every 2 s).
    await sleep(10_000);
    const full = await tableBytes(sys.databaseUrl);
    const perResponse = Object.fromEntries(
      Object.entries(full)
        .map(([table, bytes]) => [table, Math.round((bytes - (empty[table] ?? 0)) / total)] as const)
        .filter(([, bytes]) => bytes > 0)
        .sort((a, b) => b[1] - a[1]),
    );
    const bytesPerResponse = Object.values(perResponse).reduce((a, b) => a + b, 0);
    return { responses: total, webhooks: receivers.length, bytesPerResponse, perResponse };
  } finally {
    for (const r of receivers) await r.close();
    await sys.stop();
  }
}
