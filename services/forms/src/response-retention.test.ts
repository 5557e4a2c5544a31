import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { Plan } from "@formsvc/proto/identity/v1/identity_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { FakeIdentity, fakeWorkspace } from "../../identity/src/testing/fake-identity.ts";
import { entities } from "./entities/index.ts";
import { createFormsHandlers, routes } from "./handlers/forms-handlers.ts";
import { migrations } from "./migrations/index.ts";
import { deleteExpiredResponses, startResponseRetention } from "./response-retention.ts";

// The pass over forms' deleteResponsesAfterDays against a real database, with submissions faked: which
// forms are asked, with which bound, and what happens when submissions fails. What submissions deletes is
// services/submissions/src/response-deletion.test.ts; the whole path is tests/support/submissions-api-suite.ts.

const owner = asCaller("user-owner");
const identity = new FakeIdentity([{ workspace: fakeWorkspace("ws-team", Plan.FREE, "user-owner"), members: ["user-owner"] }]);
const dayMs = 24 * 60 * 60 * 1000;

/** DeleteResponsesBefore as the fake got it: the form and the bound. */
const asked: { formId: string; before: Date }[] = [];
/** When it returns an error for a form, the fake fails with it. */
let failFor: ((formId: string) => ConnectError | undefined) | undefined;
const submissions = createClient(
  SubmissionsService,
  createRouterTransport((router) =>
    router.service(SubmissionsService, {
      deleteResponsesBefore: (req) => {
        asked.push({ formId: req.formId, before: timestampDate(req.before!) });
        const failure = failFor?.(req.formId);
        if (failure) throw failure;
        return { deleted: { responses: 2n, partials: 1n, files: 4n, bytes: 100n } };
      },
    }),
  ),
);

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof FormsService>;
before(async () => {
  database = await createTestDatabase("forms_retention_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "forms", entities, migrations });
  const handlers = createFormsHandlers({ orm, identity: identity.client, submissions });
  client = createClient(FormsService, createRouterTransport((router) => routes(router, handlers)));
});
after(async () => {
  await orm?.close(true);
  await database?.drop();
});
beforeEach(async () => {
  asked.length = 0;
  failFor = undefined;
  // Each test sees only its own forms.
  await orm.em.fork().getConnection().execute(`delete from "forms"."forms"`, [], "run");
});

async function formWith(settings?: object, name = "Applications"): Promise<string> {
  const { form } = await client.createForm({ workspaceId: "ws-team", name }, owner);
  if (settings) await client.updateForm({ id: form!.id, settings: settings as never }, owner);
  return form!.id;
}

describe("forms' deleteResponsesAfterDays", () => {
  it("is set and cleared by UpdateForm, refused unless a whole number of days from 1 to 3650", async () => {
    const id = await formWith({ deleteResponsesAfterDays: 30 });
    assert.equal((await client.getForm({ id }, owner)).form?.settings?.deleteResponsesAfterDays, 30);
    for (const bad of [0, -5, 1.5, 3651, "30"]) {
      await rejectsWith(client.updateForm({ id, settings: { deleteResponsesAfterDays: bad } }, owner), Code.InvalidArgument, /^settings\.deleteResponsesAfterDays: /);
    }
    await client.updateForm({ id, settings: { deleteResponsesAfterDays: null } }, owner);
    assert.equal((await client.getForm({ id }, owner)).form?.settings?.deleteResponsesAfterDays, null);
  });

  it("a pass asks submissions to delete each such form's responses older than its days, in the Trash too, and no other form's", async () => {
    const monthly = await formWith({ deleteResponsesAfterDays: 30 });
    const daily = await formWith({ deleteResponsesAfterDays: 1 });
    const trashed = await formWith({ deleteResponsesAfterDays: 7 });
    await client.trashForm({ id: trashed }, owner);
    await formWith();
    await formWith({ submitLabel: "Send" });
    const cleared = await formWith({ deleteResponsesAfterDays: 5 });
    await client.updateForm({ id: cleared, settings: { deleteResponsesAfterDays: null } }, owner);
    // Stored before a rule it no longer meets: read as its default, responses kept.
    const invalid = await formWith();
    await orm.em.fork().getConnection().execute(`update "forms"."forms" set "settings" = '{"deleteResponsesAfterDays": 0}' where "id" = ?`, [invalid], "run");

    const now = new Date("2027-03-01T12:00:00Z");
    const done = await deleteExpiredResponses({ orm, submissions, batchSize: 2 }, now);
    const expected = [
      { formId: monthly, before: new Date(now.getTime() - 30 * dayMs) },
      { formId: daily, before: new Date(now.getTime() - dayMs) },
      { formId: trashed, before: new Date(now.getTime() - 7 * dayMs) },
    ].sort((a, b) => (a.formId < b.formId ? -1 : 1));
    assert.deepEqual(asked, expected);
    assert.deepEqual(
      done.map((d) => [d.formId, d.responses, d.partials, d.files]),
      expected.map((e) => [e.formId, 2, 1, 4]),
    );
  });

  it("goes on past a form that fails; submissions not answering ends the pass", async () => {
    const ids = [await formWith({ deleteResponsesAfterDays: 1 }), await formWith({ deleteResponsesAfterDays: 1 }), await formWith({ deleteResponsesAfterDays: 1 })].sort();
    failFor = (formId) => (formId === ids[0] ? new ConnectError("boom", Code.Internal) : undefined);
    const done = await deleteExpiredResponses({ orm, submissions });
    assert.deepEqual(asked.map((a) => a.formId), ids);
    assert.deepEqual(done.map((d) => d.formId), ids.slice(1));

    asked.length = 0;
    failFor = () => new ConnectError("submissions is down", Code.Unavailable);
    assert.deepEqual(await deleteExpiredResponses({ orm, submissions }), []);
    assert.deepEqual(asked.map((a) => a.formId), ids.slice(0, 1), "asked once, then the pass ends");
  });

  it("runs on its own at the interval, and on demand", async () => {
    const id = await formWith({ deleteResponsesAfterDays: 1 });
    const retention = startResponseRetention({ orm, submissions, intervalMs: 60_000, firstAfterMs: 10 });
    try {
      const deadline = Date.now() + 5_000;
      while (asked.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(asked.map((a) => a.formId), [id], "the first pass soon after start");
      assert.deepEqual((await retention.passNow()).map((d) => d.formId), [id]);
    } finally {
      await retention.stop();
    }
  });
});
