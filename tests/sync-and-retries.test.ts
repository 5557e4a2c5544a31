// Issue 13 end to end: an integrator's safe retries (Idempotency-Key on every POST, through the real
// gateway, identity's shared store and the services) and a sync that walks submissions by cursor while
// responses keep arriving.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

let sys: TestSystem;
let ada: Awaited<ReturnType<typeof createUserWithKey>>;
let grace: Awaited<ReturnType<typeof createUserWithKey>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
before(async () => {
  // TRUST_PROXY: respondents come from addresses of their own (X-Forwarded-For), as behind a load balancer.
  sys = await startTestSystem("sync_and_retries", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_RETRY_SCHEDULE: "0.5", TRUST_PROXY: "true" });
  ada = await createUserWithKey(sys, "ada@example.com");
  grace = await createUserWithKey(sys, "grace@example.com");
  receiver = await startReceiver();
});
after(async () => {
  await receiver?.close();
  await sys?.stop();
});

const keyed = (key: string) => ({ "idempotency-key": key });

async function publishedForm(name: string) {
  const res = await ada.api("POST", "/forms", {
    workspaceId: ada.workspace.id,
    name,
    document: {
      blocks: [
        { id: "n", key: "n", type: "NUMBER", question: "n" },
        { id: "cv", key: "cv", type: "FILE", question: "CV" },
      ],
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  await sys.cli("form:publish", "--id", res.body.id);
  return res.body.id as string;
}

async function respond(formId: string, n: number): Promise<string> {
  const res = await fetch(`${sys.url}/f/${formId}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ answers: { n }, completed: true }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { responseId: string }).responseId;
}

/**
 * Sends the same POST twice with one key, then once with the key and another body: the repeat answers
 * the first answer (marked replayed), the other body a 422. Returns the first answer's body.
 */
async function assertReplayed(path: string, body: unknown, otherBody: unknown, status: number) {
  const key = randomUUID();
  const first = await ada.api("POST", path, body, keyed(key));
  assert.equal(first.status, status, JSON.stringify(first.body));
  assert.equal(first.headers.get("idempotent-replayed"), null);
  const repeat = await ada.api("POST", path, body, keyed(key));
  assert.equal(repeat.status, status);
  assert.deepEqual(repeat.body, first.body);
  assert.equal(repeat.headers.get("idempotent-replayed"), "true");
  const reused = await ada.api("POST", path, otherBody, keyed(key));
  assert.equal(reused.status, 422);
  assert.match(reused.body.error, /Idempotency-Key was already used with a different request/);
  return first.body;
}

describe("Idempotency-Key on every POST", () => {
  it("POST /forms: a repeat answers the same form and creates none; keys are scoped per API key", async () => {
    const name = `Idem ${randomUUID()}`;
    const body = { workspaceId: ada.workspace.id, name };
    const form = await assertReplayed("/forms", body, { ...body, name: `${name} 2` }, 201);
    const listed = (await ada.api("GET", `/forms?limit=100`)).body.items.filter((f: { name: string }) => f.name.startsWith(name));
    assert.deepEqual(listed.map((f: { id: string }) => f.id), [form.id]);

    // Another API key with the same key value is another request: it creates its own form.
    const key = randomUUID();
    const adas = await ada.api("POST", "/forms", body, keyed(key));
    const graces = await grace.api("POST", "/forms", { workspaceId: grace.workspace.id, name }, keyed(key));
    assert.equal(graces.status, 201);
    assert.notEqual(graces.body.id, adas.body.id);
  });

  it("POST /webhooks: a repeat answers the same webhook, its whole secret included, and creates none", async () => {
    const formId = await publishedForm("Hooked once");
    const hook = await assertReplayed("/webhooks", { formId, url: receiver.url }, { formId, url: `${receiver.url}?other` }, 201);
    assert.match(hook.secret, /^whsec_[A-Za-z0-9+/=]{30,}$/);
    const listed = await ada.api("GET", `/webhooks?formId=${formId}`);
    assert.deepEqual(listed.body.items.map((w: { id: string }) => w.id), [hook.id]);
  });

  it("retry, test, recover and rotate-secret run once per key", async () => {
    const formId = await publishedForm("Hook actions");
    const hook = (await ada.api("POST", "/webhooks", { formId, url: receiver.url })).body;
    const eventCount = () => receiver.received.filter((r) => r.body?.data?.formId === formId && r.body?.test !== true).length;
    const responseId = await respond(formId, 1);
    const deliveries = await eventuallyPasses(
      async () => (await ada.api("GET", `/webhooks/${hook.id}/deliveries`)).body.items,
      (items: { id: string; status: string }[]) => items.length === 1 && items[0].status === "succeeded",
    );
    await eventuallyPasses(async () => eventCount(), (n) => n === 1);
    assert.equal(receiver.received.at(-1)?.body?.data?.responseId, responseId);

    const retryPath = `/webhooks/${hook.id}/deliveries/${deliveries[0].id}/retry`;
    const key = randomUUID();
    const retried = await ada.api("POST", retryPath, undefined, keyed(key));
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    const again = await ada.api("POST", retryPath, undefined, keyed(key));
    assert.deepEqual(again.body, retried.body);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(eventCount(), 2, "one retry sent, not two");
    const otherDelivery = await ada.api("POST", `/webhooks/${hook.id}/deliveries/Dxxxxxxxxxxxxxxx/retry`, undefined, keyed(key));
    assert.equal(otherDelivery.status, 422, "the same key on another path is another request");

    const testKey = randomUUID();
    const tested = await ada.api("POST", `/webhooks/${hook.id}/test`, undefined, keyed(testKey));
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.deepEqual((await ada.api("POST", `/webhooks/${hook.id}/test`, undefined, keyed(testKey))).body, tested.body);
    assert.equal(receiver.received.filter((r) => r.body?.test === true && r.body?.data?.formId === formId).length, 1, "one test event");

    const since = new Date(Date.now() - 60_000).toISOString();
    await assertReplayed(`/webhooks/${hook.id}/recover`, { since }, { since: new Date(Date.now() - 120_000).toISOString() }, 200);

    const rotateKey = randomUUID();
    const rotated = await ada.api("POST", `/webhooks/${hook.id}/rotate-secret`, undefined, keyed(rotateKey));
    assert.equal(rotated.status, 200);
    const rotatedAgain = await ada.api("POST", `/webhooks/${hook.id}/rotate-secret`, undefined, keyed(rotateKey));
    assert.equal(rotatedAgain.body.secret, rotated.body.secret, "the same new secret, not a second rotation");
    const masked = (await ada.api("GET", `/webhooks/${hook.id}`)).body.secret as string;
    assert.equal(masked.slice(-4), rotated.body.secret.slice(-4), "the webhook keeps the secret the first rotation made");
  });

  it("POST /f/:id/uploads: a repeat answers the first upload; another file with the key is a 422", async () => {
    const formId = await publishedForm("Uploads once");
    const upload = (content: string, name: string, key: string) => {
      const form = new FormData();
      form.append("file", new Blob([content], { type: "text/plain" }), name);
      return fetch(`${sys.url}/f/${formId}/uploads`, { method: "POST", body: form, headers: keyed(key) });
    };
    const key = randomUUID();
    const first = await upload("hello", "cv.txt", key);
    assert.equal(first.status, 200);
    const firstBody = await first.json();
    const repeat = await upload("hello", "cv.txt", key);
    assert.equal(repeat.status, 200);
    assert.equal(repeat.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(await repeat.json(), firstBody);
    const other = await upload("another file", "cv.txt", key);
    assert.equal(other.status, 422);
    // The same name, type and size with other bytes is another file too.
    assert.equal((await upload("jello", "cv.txt", key)).status, 422);
    // Only the first upload is kept: the bytes of the repeat and of the 422 leave neither a row nor a file.
    const filesDir = join(sys.env.DATA_DIR, "files");
    const names = await eventuallyPasses(async () => readdirSync(filesDir), (found) => !found.some((n) => n.endsWith(".tmp")));
    assert.deepEqual(names, [firstBody.uploadId]);
    const db = new pg.Client({ connectionString: sys.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query("select id from submissions.uploads where form_id = $1", [formId]);
      assert.deepEqual(rows.map((r) => r.id), [firstBody.uploadId]);
    } finally {
      await db.end();
    }
  });

  it("POST /f/:id/responses: a respondent's repeat answers the first save; the same key from elsewhere never gets their response", async () => {
    const formId = await publishedForm("Keys per respondent");
    const save = (from: string, key: string, body: object) =>
      fetch(`${sys.url}/f/${formId}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": from, ...keyed(key) },
        body: JSON.stringify(body),
      }).then(async (res) => ({
        status: res.status,
        replayedHeader: res.headers.get("idempotent-replayed"),
        body: (await res.json()) as { responseId: string; completed: boolean },
      }));
    const key = randomUUID();
    const partial = { answers: { n: 1 }, completed: false };
    const first = await save("203.0.113.10", key, partial);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.replayedHeader, null);
    assert.deepEqual(await save("203.0.113.10", key, partial), { ...first, replayedHeader: "true" }, "the respondent's own retry, marked replayed");
    // Someone else who learnt the key (and the answers) gets a response of their own, not the first one's id.
    const replayed = await save("203.0.113.99", key, partial);
    assert.deepEqual([replayed.status, replayed.replayedHeader], [200, null]);
    assert.notEqual(replayed.body.responseId, first.body.responseId);
    const db = new pg.Client({ connectionString: sys.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query("select id from submissions.responses where form_id = $1 order by id", [formId]);
      assert.deepEqual(rows.map((r) => r.id).sort(), [first.body.responseId, replayed.body.responseId].sort());
      // Neither the key nor the address is stored as such.
      const keys = await db.query("select key from submissions.idempotency_keys where form_id = $1", [formId]);
      assert.equal(keys.rows.length, 2);
      assert.ok(keys.rows.every((r) => r.key !== key && !String(r.key).includes("203.0.113")));
    } finally {
      await db.end();
    }
  });

  it("a malformed key is a 400 and nothing is created", async () => {
    const name = `Bad key ${randomUUID()}`;
    const res = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name }, keyed("has space"));
    assert.equal(res.status, 400);
    const listed = (await ada.api("GET", `/forms?limit=100`)).body.items.filter((f: { name: string }) => f.name === name);
    assert.equal(listed.length, 0);
  });
});

describe("syncing submissions while responses arrive", () => {
  it("cursor paging yields every row exactly once; OFFSET paging repeats rows as new ones push the pages down", async () => {
    const formId = await publishedForm("Busy form");
    const existing: string[] = [];
    for (let i = 0; i < 30; i++) existing.push(await respond(formId, i));

    // The same walk both ways: 5 per page, and 3 new responses arrive after every page read.
    const walk = async (pageUrl: (cursor: string | null, page: number) => string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 1; ; page++) {
        const res = await ada.api("GET", pageUrl(cursor, page));
        assert.equal(res.status, 200, JSON.stringify(res.body));
        seen.push(...res.body.items.map((s: { id: string }) => s.id));
        for (let i = 0; i < 3; i++) await respond(formId, 1000 + i);
        if (!res.body.hasMore) return seen;
        cursor = res.body.nextCursor;
      }
    };
    const base = `/forms/${formId}/submissions?limit=5`;
    const byCursor = await walk((cursor) => (cursor ? `${base}&cursor=${encodeURIComponent(cursor)}` : base));
    assert.equal(new Set(byCursor).size, byCursor.length, "no row twice");
    assert.deepEqual([...byCursor].sort(), [...existing].sort(), "every row that was there, and only those (newer ones come in the next poll)");

    const byOffset = await walk((_cursor, page) => `${base}&page=${page}`);
    const repeated = byOffset.length - new Set(byOffset).size;
    console.log(`# cursor walk: ${byCursor.length} rows, 0 repeated; OFFSET walk: ${byOffset.length} rows, ${repeated} repeated`);
    assert.ok(repeated > 0, "OFFSET paging repeats rows while responses arrive");
  });

  it("updatedSince and a cursor find what arrived since the last poll; deduped by id the copy is whole", async () => {
    const formId = await publishedForm("Polled form");
    const copy = new Map<string, unknown>();
    const poll = async (updatedSince: string) => {
      let url = `/forms/${formId}/submissions?limit=4&updatedSince=${encodeURIComponent(updatedSince)}`;
      for (;;) {
        const res = await ada.api("GET", url);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        for (const item of res.body.items) copy.set(item.id, item);
        if (!res.body.nextCursor) return;
        url = `/forms/${formId}/submissions?limit=4&updatedSince=${encodeURIComponent(updatedSince)}&cursor=${encodeURIComponent(res.body.nextCursor)}`;
      }
    };
    const all: string[] = [];
    let lastPoll = new Date(0).toISOString();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 6; i++) all.push(await respond(formId, round * 10 + i));
      // A little before this poll's start, as the recipe says: a row written during the walk comes again, deduped.
      const started = new Date(Date.now() - 1000).toISOString();
      await poll(lastPoll);
      lastPoll = started;
    }
    assert.deepEqual([...copy.keys()].sort(), [...all].sort());
  });
});
