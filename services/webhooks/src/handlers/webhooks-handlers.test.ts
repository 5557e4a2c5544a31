import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import { webhookChangesChannel } from "@formsvc/platform/pg-notices.ts";
import { recordChannel } from "@formsvc/platform/testing/notices.ts";
import { assertMigrationsApplyOnce, createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { DeleteWebhookResponseSchema, WebhooksService, type Webhook } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { createWebhooksHandlers, routes } from "./webhooks-handlers.ts";
import { privateUrlMessage } from "../webhook-rules.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { FakeForms } from "../../../forms/src/testing/fake-forms.ts";

// --- A fake forms service: a few forms and who may see them, answering GetForm as the real one does. ---

const users = { alice: "user-alice", bob: "user-bob", carol: "user-carol" } as const;

const fakeForms = new FakeForms();
fakeForms.add({ id: "form-alice", members: [users.alice] });
fakeForms.add({ id: "form-alice-2", members: [users.alice] });
fakeForms.add({ id: "form-shared", members: [users.alice, users.bob] });
fakeForms.add({ id: "form-bob", members: [users.bob] });
fakeForms.add({ id: "form-trashed", members: [users.alice], trashed: true });
fakeForms.add({ id: "form-limit", members: [users.alice] });
fakeForms.add({ id: "form-race", members: [users.alice] });
fakeForms.add({ id: "form-paging", members: [users.alice] });
fakeForms.add({ id: "form-enabled", members: [users.alice] });
/** Forms whose GetForm fails as a broken forms service would, with internal details in its message. */
const brokenForms = new Set<string>(["form-broken"]);
fakeForms.failWith = (_method, id) =>
  brokenForms.has(id) ? new ConnectError("connect ECONNREFUSED 10.0.0.7:5432 (db password=hunter2)", Code.Internal) : undefined;
/** Every GetForm call the fake saw: the form id and the caller it was made for. */
const formsCalls = fakeForms.calls.getForm;
const fakeFormsClient = fakeForms.client;

/** A logger that keeps every line it is given, to check what is (and is not) logged. */
const logged: string[] = [];
const record =
  (level: string) =>
  (...args: unknown[]) => {
    logged.push(JSON.stringify({ level, args }, (_k, v: unknown) => (v instanceof Error ? { message: v.message, cause: String(v.cause) } : v)));
  };
const fakeLogger = {
  trace: record("trace"),
  debug: record("debug"),
  info: record("info"),
  warn: record("warn"),
  error: record("error"),
  fatal: record("fatal"),
} as unknown as Logger;

// --- The webhooks service under test, on a fresh database. ---

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof WebhooksService>;
/** The same service with WEBHOOK_ALLOW_PRIVATE_URLS=true. */
let permissive: Client<typeof WebhooksService>;
/** The handlers' clock: one second later at every reading, so creation order is unambiguous. */
let clock = Date.parse("2026-01-01T00:00:00Z");

const as = asCaller;

async function newHook(
  formId: string,
  init: { url?: string; secret?: string; headers?: Record<string, string>; enabled?: boolean } = {},
  user: string = users.alice,
): Promise<Webhook> {
  const res = await client.createWebhook({ formId, url: "https://hooks.example.com/in", ...init }, as(user));
  assert.ok(res.webhook);
  return res.webhook;
}

async function rowOf(id: string): Promise<any | undefined> {
  const rows = await orm.em.fork().getConnection().execute(`select * from "webhooks"."webhooks" where id = ?`, [id]);
  return rows[0];
}

before(async () => {
  database = await createTestDatabase("webhooks_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "webhooks", entities, migrations });
  const now = () => new Date((clock += 1000));
  const handlers = createWebhooksHandlers({ orm, forms: fakeFormsClient, now, logger: fakeLogger });
  client = createClient(WebhooksService, createRouterTransport((router) => routes(router, handlers)));
  const allowing = createWebhooksHandlers({ orm, forms: fakeFormsClient, now, logger: fakeLogger, allowPrivateUrls: true });
  permissive = createClient(WebhooksService, createRouterTransport((router) => routes(router, allowing)));
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe("migrations", () => {
  it("apply once: a second replica opening the same database finds nothing to do", async () => {
    await assertMigrationsApplyOnce({ databaseUrl: database.databaseUrl, schema: "webhooks", entities, migrations }, [
      "Migration20261124000000_initial",
      "Migration20261215000000_disabled_and_rotation",
      "Migration20261215000100_event_types",
      "Migration20270120000000_webhook_change_notices",
      "Migration20261128000900_subscribers",
      "Migration20261128000901_formats",
    ]);
  });

  it("create the table with the (form_id, created_at desc) index", async () => {
    const rows: { indexdef: string }[] = await orm.em
      .fork()
      .getConnection()
      .execute(`select indexdef from pg_indexes where schemaname = 'webhooks' and tablename = 'webhooks'`);
    assert.ok(
      rows.some((r) => /\(form_id, created_at DESC, id DESC\)/.test(r.indexdef)),
      JSON.stringify(rows),
    );
  });
});

describe("CreateWebhook", () => {
  it("creates an enabled webhook with a generated whsec_ secret (shown whole this once) and no headers by default, after asking forms as the caller", async () => {
    const before = formsCalls.length;
    const hook = await newHook("form-alice");
    assert.match(hook.id, /^[A-Za-z0-9]{16}$/);
    assert.equal(hook.formId, "form-alice");
    assert.equal(hook.url, "https://hooks.example.com/in");
    assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{32}$/, "24 random bytes in standard base64");
    assert.deepEqual(hook.headers, {});
    assert.equal(hook.enabled, true);
    assert.ok(hook.createdAt && hook.updatedAt);
    assert.equal(timestampDate(hook.createdAt).getTime(), timestampDate(hook.updatedAt).getTime());
    assert.deepEqual(formsCalls.slice(before), [{ id: "form-alice", caller: users.alice }]);
    const row = await rowOf(hook.id);
    assert.equal(row.form_id, "form-alice");
    assert.equal(row.secret, hook.secret);
    const { webhook: read } = await client.getWebhook({ id: hook.id }, as(users.alice));
    assert.equal(read?.secret, `whsec_…${hook.secret.slice(-4)}`, "reads show it masked");
    assert.deepEqual(row.headers, {});
    assert.equal(row.enabled, true);
  });

  it("stores the secret, the headers and enabled: false", async () => {
    const hook = await newHook("form-alice", {
      url: "http://receiver.example.org:8443/path?x=1",
      secret: "s3cret",
      headers: { Authorization: "Bearer abc", "X-Team": "growth" },
      enabled: false,
    });
    assert.equal(hook.url, "http://receiver.example.org:8443/path?x=1");
    assert.equal(hook.secret, "s3cret");
    assert.deepEqual(hook.headers, { Authorization: "Bearer abc", "X-Team": "growth" });
    assert.equal(hook.enabled, false);
    const row = await rowOf(hook.id);
    assert.equal(row.secret, "s3cret");
    assert.deepEqual(row.headers, { Authorization: "Bearer abc", "X-Team": "growth" });
    assert.equal(row.enabled, false);
    const enabledTrue = await newHook("form-alice", { enabled: true });
    assert.equal(enabledTrue.enabled, true);
  });

  it("needs a caller and a form id", async () => {
    await rejectsWith(client.createWebhook({ formId: "form-alice", url: "https://example.com/" }), Code.Unauthenticated);
    await rejectsWith(client.createWebhook({ formId: "", url: "https://example.com/" }, as(users.alice)), Code.InvalidArgument, "formId is required");
  });

  it("answers NOT_FOUND form not found for foreign, missing and trashed forms, storing nothing", async () => {
    const count = async () => (await orm.em.fork().getConnection().execute(`select count(*)::int as n from "webhooks"."webhooks"`))[0].n;
    const before = await count();
    for (const [formId, user] of [
      ["form-bob", users.alice],
      ["form-nope", users.alice],
      ["form-trashed", users.alice],
      ["form-alice", users.carol],
    ] as const) {
      await rejectsWith(client.createWebhook({ formId, url: "https://example.com/" }, as(user)), Code.NotFound, "form not found");
    }
    assert.equal(await count(), before);
  });

  it("lets every member of a shared form add one", async () => {
    const hook = await newHook("form-shared", {}, users.bob);
    assert.equal(hook.formId, "form-shared");
  });

  it("answers UNAVAILABLE without forms' details when forms fails, and logs no secret", async () => {
    logged.length = 0;
    const err = await rejectsWith(
      client.createWebhook({ formId: "form-broken", url: "https://example.com/", secret: "top-secret-value" }, as(users.alice)),
      Code.Unavailable,
      "forms is unavailable",
    );
    assert.doesNotMatch(err.message, /hunter2|ECONNREFUSED|10\.0\.0\.7/);
    assert.ok(logged.length > 0, "the failure is logged");
    assert.ok(logged.every((line) => !line.includes("top-secret-value")), "the secret is never logged");
  });

  it("refuses invalid URLs with a url: message", async () => {
    const bad = (url: string) => client.createWebhook({ formId: "form-alice", url }, as(users.alice));
    await rejectsWith(bad(""), Code.InvalidArgument, "url: is required");
    await rejectsWith(bad("not a url"), Code.InvalidArgument, /^url: /);
    await rejectsWith(bad("/relative/path"), Code.InvalidArgument, "url: must be an absolute http or https URL");
    await rejectsWith(bad("ftp://example.com/x"), Code.InvalidArgument, "url: must use http or https");
    await rejectsWith(bad("https://user:pw@example.com/"), Code.InvalidArgument, "url: must not contain a username or password");
    await rejectsWith(bad("https://example.com:0/"), Code.InvalidArgument, "url: the port must be between 1 and 65535");
    await rejectsWith(bad(`https://example.com/${"a".repeat(2000)}`), Code.InvalidArgument, "url: must be at most 2000 characters");
  });

  it("refuses literal private and loopback addresses unless WEBHOOK_ALLOW_PRIVATE_URLS is set", async () => {
    const message = privateUrlMessage;
    for (const url of ["http://127.0.0.1:9000/hook", "http://10.0.0.5/", "http://192.168.1.10/", "http://[::1]/", "http://169.254.169.254/", "http://localhost:3000/"]) {
      await rejectsWith(client.createWebhook({ formId: "form-alice-2", url }, as(users.alice)), Code.InvalidArgument, message);
      const res = await permissive.createWebhook({ formId: "form-alice-2", url }, as(users.alice));
      assert.equal(res.webhook?.url, url);
    }
    await rejectsWith(
      client.updateWebhook({ id: (await newHook("form-alice-2")).id, url: "http://127.0.0.1/" }, as(users.alice)),
      Code.InvalidArgument,
      message,
    );
  });

  it("refuses a secret over 256 characters", async () => {
    await rejectsWith(
      client.createWebhook({ formId: "form-alice", url: "https://example.com/", secret: "x".repeat(257) }, as(users.alice)),
      Code.InvalidArgument,
      "secret: must be at most 256 characters",
    );
    const hook = await newHook("form-alice", { secret: "x".repeat(256) });
    assert.equal(hook.secret, "x".repeat(256));
  });

  it("refuses reserved, invalid and too many headers", async () => {
    const bad = (headers: Record<string, string>) =>
      client.createWebhook({ formId: "form-alice", url: "https://example.com/", headers }, as(users.alice));
    for (const name of ["Content-Type", "content-length", "HOST", "X-Service-Signature", "webhook-id", "Webhook-Timestamp", "webhook-signature", "User-Agent", "Transfer-Encoding", "Connection"]) {
      await rejectsWith(bad({ [name]: "v" }), Code.InvalidArgument, `headers.${name}: reserved`);
    }
    await rejectsWith(bad({ "Bad Name": "v" }), Code.InvalidArgument, /^headers\.Bad Name: /);
    await rejectsWith(bad({ "X-A": "one\r\nX-Injected: two" }), Code.InvalidArgument, /^headers\.X-A: /);
    await rejectsWith(bad({ "X-Price": "5 \u20ac" }), Code.InvalidArgument, /^headers\.X-Price: the value may only contain printable ASCII or Latin-1/);
    await rejectsWith(bad({ "X-A": "v".repeat(1001) }), Code.InvalidArgument, "headers.X-A: the value must be at most 1000 characters");
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, "v"]));
    await rejectsWith(bad(many), Code.InvalidArgument, "headers: at most 20 headers are allowed");
  });

  it("allows at most 20 webhooks per form (FAILED_PRECONDITION beyond)", async () => {
    for (let i = 0; i < 20; i++) await newHook("form-limit", { url: `https://example.com/${i}` });
    await rejectsWith(
      client.createWebhook({ formId: "form-limit", url: "https://example.com/21" }, as(users.alice)),
      Code.FailedPrecondition,
      "a form can have at most 20 webhooks",
    );
    const other = await newHook("form-alice-2");
    assert.equal(other.formId, "form-alice-2", "the limit is per form");
    // Deleting one makes room again.
    const { webhooks } = await client.listWebhooks({ formId: "form-limit" }, as(users.alice));
    await client.deleteWebhook({ id: webhooks[0].id }, as(users.alice));
    assert.ok((await newHook("form-limit")).id);
  });

  it("keeps to the limit under concurrent creations", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 25 }, (_, i) =>
        client.createWebhook({ formId: "form-race", url: `https://example.com/${i}` }, as(users.alice)),
      ),
    );
    const created = results.filter((r) => r.status === "fulfilled").length;
    const refused = results.filter(
      (r) => r.status === "rejected" && r.reason instanceof ConnectError && r.reason.code === Code.FailedPrecondition,
    ).length;
    assert.equal(created, 20);
    assert.equal(refused, 5);
    const { webhooks } = await client.listWebhooks({ formId: "form-race", limit: 100 }, as(users.alice));
    assert.equal(webhooks.length, 20);
  });
});

describe("ListWebhooks", () => {
  it("lists a form's webhooks newest first, page by page", async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await newHook("form-paging", { url: `https://example.com/${i}`, secret: `s${i}` })).id);
    const newestFirst = [...made].reverse();

    const all = await client.listWebhooks({ formId: "form-paging" }, as(users.alice));
    assert.deepEqual(all.webhooks.map((w) => w.id), newestFirst);
    assert.equal(all.hasMore, false);
    assert.equal(all.webhooks[0].secret, "…", "masked");

    const first = await client.listWebhooks({ formId: "form-paging", page: 1, limit: 2 }, as(users.alice));
    assert.deepEqual(first.webhooks.map((w) => w.id), newestFirst.slice(0, 2));
    assert.equal(first.hasMore, true);
    const third = await client.listWebhooks({ formId: "form-paging", page: 3, limit: 2 }, as(users.alice));
    assert.deepEqual(third.webhooks.map((w) => w.id), newestFirst.slice(4));
    assert.equal(third.hasMore, false);
    const beyond = await client.listWebhooks({ formId: "form-paging", page: 9, limit: 2 }, as(users.alice));
    assert.deepEqual(beyond.webhooks, []);
  });

  it("lists only the given form's webhooks", async () => {
    const { webhooks } = await client.listWebhooks({ formId: "form-shared" }, as(users.alice));
    assert.ok(webhooks.length > 0);
    assert.ok(webhooks.every((w) => w.formId === "form-shared"));
  });

  it("needs a caller and a form id, and valid paging", async () => {
    await rejectsWith(client.listWebhooks({ formId: "form-alice" }), Code.Unauthenticated);
    await rejectsWith(client.listWebhooks({ formId: "" }, as(users.alice)), Code.InvalidArgument, "formId is required");
    await rejectsWith(client.listWebhooks({ formId: "form-alice", limit: 501 }, as(users.alice)), Code.InvalidArgument, /^limit /);
    await rejectsWith(client.listWebhooks({ formId: "form-alice", page: -1 }, as(users.alice)), Code.InvalidArgument, /^page /);
  });

  it("answers NOT_FOUND form not found for forms the caller cannot see", async () => {
    await rejectsWith(client.listWebhooks({ formId: "form-alice" }, as(users.bob)), Code.NotFound, "form not found");
    await rejectsWith(client.listWebhooks({ formId: "form-nope" }, as(users.alice)), Code.NotFound, "form not found");
    await rejectsWith(client.listWebhooks({ formId: "form-trashed" }, as(users.alice)), Code.NotFound, "form not found");
    await rejectsWith(client.listWebhooks({ formId: "form-broken" }, as(users.alice)), Code.Unavailable, "forms is unavailable");
  });
});

describe("GetWebhook", () => {
  it("answers the caller's webhook with its headers and its secret masked", async () => {
    const made = await newHook("form-alice", { secret: "abcdefgh", headers: { "X-A": "1" } });
    assert.equal(made.secret, "abcdefgh", "whole in the creation's answer");
    const { webhook } = await client.getWebhook({ id: made.id }, as(users.alice));
    assert.deepEqual(webhook, { ...made, secret: "…" });
  });

  it("answers the same NOT_FOUND for missing webhooks and webhooks of forms the caller cannot see", async () => {
    const made = await newHook("form-alice");
    const before = formsCalls.length;
    await rejectsWith(client.getWebhook({ id: made.id }, as(users.bob)), Code.NotFound, "webhook not found");
    await rejectsWith(client.getWebhook({ id: "nope" }, as(users.alice)), Code.NotFound, "webhook not found");
    await rejectsWith(client.getWebhook({ id: "" }, as(users.alice)), Code.NotFound, "webhook not found");
    // Each path asks forms once (a missing webhook about a form nobody has), so neither answers sooner.
    assert.deepEqual(formsCalls.slice(before), [
      { id: "form-alice", caller: users.bob },
      { id: "~", caller: users.alice },
      { id: "~", caller: users.alice },
    ]);
    await rejectsWith(client.getWebhook({ id: made.id }), Code.Unauthenticated);
  });

  it("hides webhooks of a form once it is in the Trash", async () => {
    const soonTrashed = fakeForms.add({ id: "form-soon-trashed", members: [users.alice] });
    const made = await newHook("form-soon-trashed");
    soonTrashed.trashed = true;
    await rejectsWith(client.getWebhook({ id: made.id }, as(users.alice)), Code.NotFound, "webhook not found");
    await rejectsWith(client.updateWebhook({ id: made.id, enabled: false }, as(users.alice)), Code.NotFound, "webhook not found");
    await rejectsWith(client.deleteWebhook({ id: made.id }, as(users.alice)), Code.NotFound, "webhook not found");
    assert.ok(await rowOf(made.id), "nothing was deleted");
  });

  it("answers UNAVAILABLE when forms fails", async () => {
    fakeForms.add({ id: "form-flaky", members: [users.alice] });
    const made = await newHook("form-flaky");
    brokenForms.add("form-flaky");
    await rejectsWith(client.getWebhook({ id: made.id }, as(users.alice)), Code.Unavailable, "forms is unavailable");
    brokenForms.delete("form-flaky");
  });
});

describe("UpdateWebhook", () => {
  it("changes only the fields that are set", async () => {
    const made = await newHook("form-alice", { secret: "keep", headers: { "X-A": "1" } });
    const { webhook } = await client.updateWebhook({ id: made.id, url: "https://new.example.com/x" }, as(users.alice));
    assert.ok(webhook);
    assert.equal(webhook.url, "https://new.example.com/x");
    assert.equal(webhook.secret, "…");
    assert.deepEqual(webhook.headers, { "X-A": "1" });
    assert.equal(webhook.enabled, true);
    assert.ok(timestampDate(webhook.updatedAt!) > timestampDate(made.updatedAt!));
    assert.deepEqual(webhook.createdAt, made.createdAt);

    const disabled = await client.updateWebhook({ id: made.id, enabled: false }, as(users.alice));
    assert.equal(disabled.webhook?.enabled, false);
    assert.equal(disabled.webhook?.url, "https://new.example.com/x");
    assert.equal(disabled.webhook?.secret, "…");

    const resecret = await client.updateWebhook({ id: made.id, secret: "changed" }, as(users.alice));
    assert.equal(resecret.webhook?.secret, "…");
    assert.equal((await rowOf(made.id)).secret, "changed");
    assert.deepEqual(resecret.webhook?.headers, { "X-A": "1" });
    assert.equal(resecret.webhook?.enabled, false);
  });

  it("removes the secret when given an empty one", async () => {
    const made = await newHook("form-alice", { secret: "gone-soon" });
    const { webhook } = await client.updateWebhook({ id: made.id, secret: "" }, as(users.alice));
    assert.equal(webhook?.secret, "");
    assert.equal((await rowOf(made.id)).secret, null);
  });

  it("replaces all headers when headers are set, and clears them with an empty map", async () => {
    const made = await newHook("form-alice", { headers: { "X-A": "1", "X-B": "2" } });
    const replaced = await client.updateWebhook({ id: made.id, headers: { values: { "X-C": "3" } } }, as(users.alice));
    assert.deepEqual(replaced.webhook?.headers, { "X-C": "3" });
    const cleared = await client.updateWebhook({ id: made.id, headers: { values: {} } }, as(users.alice));
    assert.deepEqual(cleared.webhook?.headers, {});
    assert.deepEqual((await rowOf(made.id)).headers, {});
  });

  it("keeps updated_at when nothing changes", async () => {
    const made = await newHook("form-alice", { secret: "same", headers: { "X-A": "1" } });
    const { webhook } = await client.updateWebhook(
      { id: made.id, url: made.url, secret: "same", headers: { values: { "X-A": "1" } }, enabled: true },
      as(users.alice),
    );
    assert.deepEqual(webhook?.updatedAt, made.updatedAt);
    const nothing = await client.updateWebhook({ id: made.id }, as(users.alice));
    assert.deepEqual(nothing.webhook, { ...made, secret: "…" });
  });

  it("validates what is set and changes nothing when refused", async () => {
    const made = await newHook("form-alice", { secret: "s", headers: { "X-A": "1" } });
    const update = (fields: object) => client.updateWebhook({ id: made.id, ...fields }, as(users.alice));
    await rejectsWith(update({ url: "" }), Code.InvalidArgument, "url: is required");
    await rejectsWith(update({ url: "mailto:a@example.com" }), Code.InvalidArgument, "url: must use http or https");
    await rejectsWith(update({ secret: "x".repeat(257) }), Code.InvalidArgument, "secret: must be at most 256 characters");
    await rejectsWith(update({ headers: { values: { "webhook-id": "x" } } }), Code.InvalidArgument, "headers.webhook-id: reserved");
    await rejectsWith(update({ headers: { values: { "X-A": "a\nb" } } }), Code.InvalidArgument, /^headers\.X-A: /);
    await rejectsWith(update({ headers: { values: { "X-Emoji": "\u{1F600}" } } }), Code.InvalidArgument, /^headers\.X-Emoji: the value may only/);
    await rejectsWith(update({ url: "http://example.com:0/hook" }), Code.InvalidArgument, "url: the port must be between 1 and 65535");
    const { webhook } = await client.getWebhook({ id: made.id }, as(users.alice));
    assert.deepEqual(webhook, { ...made, secret: "…" });
  });

  it("answers NOT_FOUND webhook not found for missing webhooks and others' webhooks, changing nothing", async () => {
    const made = await newHook("form-alice");
    await rejectsWith(client.updateWebhook({ id: made.id, enabled: false }, as(users.bob)), Code.NotFound, "webhook not found");
    await rejectsWith(client.updateWebhook({ id: "nope", enabled: false }, as(users.alice)), Code.NotFound, "webhook not found");
    await rejectsWith(client.updateWebhook({ id: made.id, enabled: false }), Code.Unauthenticated);
    assert.equal((await rowOf(made.id)).enabled, true);
  });
});

describe("DeleteWebhook", () => {
  it("removes the webhook for good: Get and GetWebhookForDelivery answer NOT_FOUND afterwards", async () => {
    const made = await newHook("form-alice", { secret: "x" });
    const res = await client.deleteWebhook({ id: made.id }, as(users.alice));
    assert.deepEqual(res, create(DeleteWebhookResponseSchema));
    assert.equal(await rowOf(made.id), undefined, "the row is gone");
    await rejectsWith(client.getWebhook({ id: made.id }, as(users.alice)), Code.NotFound, "webhook not found");
    await rejectsWith(client.getWebhookForDelivery({ id: made.id }), Code.NotFound, "webhook not found");
    await rejectsWith(client.deleteWebhook({ id: made.id }, as(users.alice)), Code.NotFound, "webhook not found");
  });

  it("answers NOT_FOUND webhook not found for others' webhooks and keeps them", async () => {
    const made = await newHook("form-bob", {}, users.bob);
    await rejectsWith(client.deleteWebhook({ id: made.id }, as(users.alice)), Code.NotFound, "webhook not found");
    await rejectsWith(client.deleteWebhook({ id: made.id }), Code.Unauthenticated);
    assert.ok(await rowOf(made.id));
  });
});

describe("ListEnabledWebhooks (internal)", () => {
  it("answers a form's enabled webhooks only, with secrets and headers, without a caller or forms", async () => {
    const a = await newHook("form-enabled", { url: "https://a.example.com/", secret: "sa", headers: { "X-A": "1" } });
    await newHook("form-enabled", { url: "https://b.example.com/", enabled: false });
    const c = await newHook("form-enabled", { url: "https://c.example.com/" });
    const d = await newHook("form-enabled", { url: "https://d.example.com/", enabled: false });
    await client.updateWebhook({ id: d.id, enabled: true }, as(users.alice));

    const calls = formsCalls.length;
    const { webhooks } = await client.listEnabledWebhooks({ formId: "form-enabled" });
    assert.equal(formsCalls.length, calls, "forms is not asked");
    assert.deepEqual(webhooks.map((w) => w.url), ["https://a.example.com/", "https://c.example.com/", "https://d.example.com/"]);
    assert.equal(webhooks[0].secret, "sa");
    assert.deepEqual(webhooks[0].headers, { "X-A": "1" });
    assert.equal(webhooks[1].id, c.id);
    assert.equal(webhooks[0].id, a.id);

    await client.updateWebhook({ id: a.id, enabled: false }, as(users.alice));
    const after = await client.listEnabledWebhooks({ formId: "form-enabled" });
    assert.deepEqual(after.webhooks.map((w) => w.id), [c.id, d.id]);
  });

  it("answers an empty list for a form without webhooks, and needs a form id", async () => {
    assert.deepEqual((await client.listEnabledWebhooks({ formId: "form-without" })).webhooks, []);
    await rejectsWith(client.listEnabledWebhooks({ formId: "" }), Code.InvalidArgument, "formId is required");
  });
});

describe("GetWebhookForDelivery (internal)", () => {
  it("answers the webhook as it is now, disabled or not, with its secret, without a caller", async () => {
    const made = await newHook("form-alice", { secret: "for-delivery", headers: { "X-D": "d" }, enabled: false });
    const calls = formsCalls.length;
    const { webhook } = await client.getWebhookForDelivery({ id: made.id });
    assert.equal(formsCalls.length, calls, "forms is not asked");
    assert.deepEqual(webhook, made);
    await client.updateWebhook({ id: made.id, url: "https://moved.example.com/" }, as(users.alice));
    assert.equal((await client.getWebhookForDelivery({ id: made.id })).webhook?.url, "https://moved.example.com/");
  });

  it("answers NOT_FOUND for unknown ids", async () => {
    await rejectsWith(client.getWebhookForDelivery({ id: "nope" }), Code.NotFound, "webhook not found");
    await rejectsWith(client.getWebhookForDelivery({ id: "" }), Code.NotFound, "webhook not found");
  });
});

describe("DisableWebhook (internal)", () => {
  it("disables with the reason and when; the first reason stays; PATCH enabled: true clears both", async () => {
    const made = await newHook("form-enabled");
    assert.deepEqual([made.disabledReason, made.disabledAt], ["", undefined]);
    const { webhook } = await client.disableWebhook({ id: made.id, reason: "the receiver answered 410 Gone" });
    assert.deepEqual([webhook?.enabled, webhook?.disabledReason, webhook?.secret], [false, "the receiver answered 410 Gone", `whsec_…${made.secret.slice(-4)}`]);
    assert.ok(webhook?.disabledAt);
    const again = await client.disableWebhook({ id: made.id, reason: "failing for 5 days" });
    assert.equal(again.webhook?.disabledReason, "the receiver answered 410 Gone", "an already disabled webhook keeps its reason");
    assert.deepEqual(again.webhook?.disabledAt, webhook?.disabledAt);
    assert.equal((await client.getWebhook({ id: made.id }, as(users.alice))).webhook?.disabledReason, "the receiver answered 410 Gone");

    const enabled = await client.updateWebhook({ id: made.id, enabled: true }, as(users.alice));
    assert.deepEqual([enabled.webhook?.enabled, enabled.webhook?.disabledReason, enabled.webhook?.disabledAt], [true, "", undefined]);
    const byOwner = await client.updateWebhook({ id: made.id, enabled: false }, as(users.alice));
    assert.equal(byOwner.webhook?.disabledReason, "disabled by its owner");
    assert.ok(byOwner.webhook?.disabledAt);
  });

  it("answers NOT_FOUND for unknown ids", async () => {
    await rejectsWith(client.disableWebhook({ id: "nope", reason: "x" }), Code.NotFound, "webhook not found");
  });
});

describe("RotateSecret", () => {
  it("issues a new whsec_ secret shown whole; the previous one goes to delivery only, for 24 hours", async () => {
    const made = await newHook("form-alice");
    const { webhook } = await client.rotateSecret({ id: made.id }, as(users.alice));
    assert.match(webhook!.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.notEqual(webhook!.secret, made.secret);
    assert.equal(webhook!.previousSecret, "", "the caller is not shown the previous secret");
    const expires = timestampDate(webhook!.previousSecretExpiresAt!);
    assert.equal(expires.getTime() - timestampDate(webhook!.updatedAt!).getTime(), 24 * 60 * 60 * 1000);

    const forDelivery = (await client.getWebhookForDelivery({ id: made.id })).webhook!;
    assert.deepEqual([forDelivery.secret, forDelivery.previousSecret], [webhook!.secret, made.secret]);
    assert.equal((await client.getWebhook({ id: made.id }, as(users.alice))).webhook?.secret, `whsec_…${webhook!.secret.slice(-4)}`);

    clock = expires.getTime();
    const expired = (await client.getWebhookForDelivery({ id: made.id })).webhook!;
    assert.deepEqual([expired.secret, expired.previousSecret, expired.previousSecretExpiresAt], [webhook!.secret, "", undefined]);
  });

  it("gives a webhook without a secret its first, with no previous one; answers NOT_FOUND for others' webhooks", async () => {
    const made = await newHook("form-alice", { secret: "x" });
    await client.updateWebhook({ id: made.id, secret: "" }, as(users.alice));
    const { webhook } = await client.rotateSecret({ id: made.id }, as(users.alice));
    assert.match(webhook!.secret, /^whsec_/);
    assert.equal((await client.getWebhookForDelivery({ id: made.id })).webhook?.previousSecret, "");
    await rejectsWith(client.rotateSecret({ id: made.id }, as(users.bob)), Code.NotFound, "webhook not found");
  });

  it("ends the overlap when a secret is set by hand", async () => {
    const made = await newHook("form-alice");
    await client.rotateSecret({ id: made.id }, as(users.alice));
    await client.updateWebhook({ id: made.id, secret: "by-hand" }, as(users.alice));
    const forDelivery = (await client.getWebhookForDelivery({ id: made.id })).webhook!;
    assert.deepEqual([forDelivery.secret, forDelivery.previousSecret], ["by-hand", ""]);
  });
});

describe("event types", () => {
  it("default to FORM_RESPONSE; are checked (known, at least one, none twice); PATCH replaces them", async () => {
    const plain = await newHook("form-alice-2");
    assert.deepEqual(plain.eventTypes, ["FORM_RESPONSE"]);
    const chosen = (await client.createWebhook({ formId: "form-alice-2", url: "https://hooks.example.com/in", eventTypes: ["FORM_PUBLISHED", "FORM_RESPONSE_PARTIAL"] }, as(users.alice))).webhook!;
    assert.deepEqual(chosen.eventTypes, ["FORM_PUBLISHED", "FORM_RESPONSE_PARTIAL"]);
    await rejectsWith(
      client.createWebhook({ formId: "form-alice-2", url: "https://hooks.example.com/in", eventTypes: ["RESPONSE"] }, as(users.alice)),
      Code.InvalidArgument,
      'eventTypes: "RESPONSE" is not an event type; one of FORM_RESPONSE, FORM_RESPONSE_PARTIAL, FORM_PUBLISHED, FORM_CLOSED, FORM_DELETED',
    );
    await rejectsWith(
      client.createWebhook({ formId: "form-alice-2", url: "https://hooks.example.com/in", eventTypes: ["FORM_CLOSED", "FORM_CLOSED"] }, as(users.alice)),
      Code.InvalidArgument,
      "eventTypes: FORM_CLOSED is given twice",
    );
    await rejectsWith(client.updateWebhook({ id: plain.id, eventTypes: { values: [] } }, as(users.alice)), Code.InvalidArgument, "eventTypes: at least one event type is needed");
    const updated = await client.updateWebhook({ id: plain.id, eventTypes: { values: ["FORM_DELETED", "FORM_RESPONSE"] } }, as(users.alice));
    assert.deepEqual(updated.webhook?.eventTypes, ["FORM_DELETED", "FORM_RESPONSE"]);
  });

  it("ListEnabledWebhooks answers the webhooks subscribed to the event type (FORM_RESPONSE when none is named)", async () => {
    const responses = await newHook("form-paging");
    const published = (await client.createWebhook({ formId: "form-paging", url: "https://hooks.example.com/p", eventTypes: ["FORM_PUBLISHED"] }, as(users.alice))).webhook!;
    const ids = async (eventType: string) => (await client.listEnabledWebhooks({ formId: "form-paging", eventType })).webhooks.map((w) => w.id);
    assert.ok((await ids("")).includes(responses.id));
    assert.ok(!(await ids("")).includes(published.id));
    assert.deepEqual(await ids("FORM_PUBLISHED"), [published.id]);
    assert.deepEqual(await ids("FORM_CLOSED"), []);
  });
});

describe("change notices for the webhooks delivery holds", () => {
  it("notifies `<formId> <webhookId>` on creation, every change and deletion, once committed", async () => {
    const notices = await recordChannel(database.databaseUrl, webhookChangesChannel);
    try {
      const hook = await newHook("form-alice");
      const notice = `form-alice ${hook.id}`;
      assert.deepEqual(await notices.settled(1), [notice], "created");
      await client.updateWebhook({ id: hook.id, url: "https://hooks.example.com/elsewhere" }, as(users.alice));
      assert.deepEqual(await notices.settled(1), [notice], "its URL changed");
      await client.rotateSecret({ id: hook.id }, as(users.alice));
      assert.deepEqual(await notices.settled(1), [notice], "its secret rotated");
      await client.disableWebhook({ id: hook.id, reason: "410 Gone" });
      assert.deepEqual(await notices.settled(1), [notice], "disabled by delivery");
      await client.getWebhookForDelivery({ id: hook.id });
      assert.deepEqual(await notices.settled(0), [], "a read notifies nothing");
      await client.deleteWebhook({ id: hook.id }, as(users.alice));
      assert.deepEqual(await notices.settled(1), [notice], "deleted");
    } finally {
      await notices.stop();
    }
  });
});
