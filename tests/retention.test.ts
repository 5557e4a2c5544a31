// Retention end to end, as an operator meets it: the delivery tables' partitions made at start, and the
// operator's prune through the CLI removing finished deliveries (with their attempts) while pending ones and
// what they send stay, as the API lists them. The partitions' own drops and row-by-row cases are tested with
// named spans in services/delivery/src/retention/partitions.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { deliverySchema } from "@formsvc/api-records/schemas";
import { envelopeOf } from "../gateway/src/routes/paging.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

describe("retention", () => {
  let sys: TestSystem;
  let ok: Awaited<ReturnType<typeof startReceiver>>;
  let failing: Awaited<ReturnType<typeof startReceiver>>;
  let db: pg.Client;

  before(async () => {
    ok = await startReceiver();
    failing = await startReceiver(() => ({ status: 503 }));
    sys = await startTestSystem("retention", {
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      // The failing receiver's deliveries wait an hour for their next attempt: pending throughout the test.
      WEBHOOK_RETRY_SCHEDULE: "3600",
      DELIVERY_RETENTION_DAYS: "1",
      RETENTION_PARTITION_SECONDS: "3600",
    });
    db = new pg.Client({ connectionString: sys.databaseUrl });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await sys?.stop();
    await ok?.close();
    await failing?.close();
  });

  it("delivery's partitions are made at start, the coming spans ahead", async () => {
    const { rows } = await db.query<{ name: string }>(
      `select c.relname as "name" from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'delivery.deliveries'::regclass order by 1`,
    );
    const names = rows.map((r) => r.name);
    const hour = (offset: number) => `deliveries_${new Date(Math.floor(Date.now() / 3_600_000 + offset) * 3_600_000).toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "t")}`;
    for (const name of [hour(0), hour(1), hour(2)]) assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
    assert.ok(names.includes("deliveries_default"));
  });

  it("prune removes finished deliveries and their attempts; pending ones and their bodies stay; the API lists what is kept", async () => {
    const ada = await createUserWithKey(sys, "ada@example.com");
    const form = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Kept", document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] } });
    await sys.cli("form:publish", "--id", form.body.id);
    const hook = async (url: string) => (await ada.api("POST", "/webhooks", { formId: form.body.id, url })).body.id as string;
    const okHook = await hook(ok.url);
    const failingHook = await hook(failing.url);
    for (let n = 0; n < 3; n++) {
      const res = await fetch(`${sys.url}/f/${form.body.id}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answers: { n }, completed: true }) });
      assert.equal(res.status, 200);
    }
    const listed = async (webhookId: string) => {
      const res = await ada.api("GET", `/webhooks/${webhookId}/deliveries`);
      assert.equal(res.status, 200);
      return envelopeOf(deliverySchema, "D").parse(res.body).items;
    };
    await eventuallyPasses(async () => (await listed(okHook)).filter((d) => d.status === "succeeded").length, (n) => n === 3);
    await eventuallyPasses(async () => (await listed(failingHook)).filter((d) => d.status === "retrying" && d.attempts === 1).length, (n) => n === 3);

    const until = new Date(Date.now() + 60_000).toISOString();
    const delivered = (counts: Record<string, number>) => ({ deliveries: counts["delivery.deliveries"], attempts: counts["delivery.attempts"], payloads: counts["delivery.payloads"] });
    const dryRun = delivered(await sys.cli("prune", "--older-than", until, "--dry-run"));
    // The three succeeded deliveries and their attempts; no body, since each event still has a retrying delivery.
    assert.deepEqual(dryRun, { deliveries: 3, attempts: 3, payloads: 0 });
    assert.equal((await listed(okHook)).length, 3, "a dry run removes nothing");
    const pruned = delivered(await sys.cli("prune", "--older-than", until));
    assert.deepEqual(pruned, dryRun, "prune removes what the dry run counted");

    assert.equal((await listed(okHook)).length, 0, "finished receipts are gone from the API");
    const pending = await listed(failingHook);
    assert.deepEqual(pending.map((d) => d.status), ["retrying", "retrying", "retrying"], "pending ones stay");
    const { rows } = await db.query<{ deliveries: number; attempts: number; payloads: number }>(
      `select (select count(*) from delivery.deliveries)::int as "deliveries", (select count(*) from delivery.attempts)::int as "attempts", (select count(*) from delivery.payloads)::int as "payloads"`,
    );
    assert.deepEqual(rows[0], { deliveries: 3, attempts: 3, payloads: 3 });
  });
});
