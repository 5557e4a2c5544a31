import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { AuditEventSchema, IdentityService, Role, type AuditEvent } from "@formsvc/proto/identity/v1/identity_pb.js";
import { entities } from "../entities/index.ts";
import { migrations } from "../migrations/index.ts";
import { identityRetention } from "../retention.ts";
import { createIdentityHandlers, routes } from "./identity-handlers.ts";

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof IdentityService>;
const lines: string[] = [];
const day = 24 * 60 * 60 * 1000;

let counter = 0;
const uniqueEmail = (local: string) => `${local}.${Date.now()}.${counter++}@example.com`;
const sql = (query: string, params: unknown[] = []) => orm.em.fork().getConnection().execute(query, params);

before(async () => {
  database = await createTestDatabase("identity_audit_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "identity", entities, migrations });
  const handlers = createIdentityHandlers({ orm, publicUrl: "http://forms.test", auditLine: (line) => lines.push(line) });
  client = createClient(IdentityService, createRouterTransport((router) => routes(router, handlers)));
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

/** An owner with a team workspace holding an admin and a plain member. */
async function team() {
  const owner = await client.createUser({ email: uniqueEmail("owner"), name: "Olga" });
  const admin = await client.createUser({ email: uniqueEmail("admin"), name: "Ade" });
  const member = await client.createUser({ email: uniqueEmail("member"), name: "Mo" });
  const { workspace } = await client.createWorkspace({ ownerEmail: owner.user!.email, name: "Team" });
  await client.addMember({ workspaceId: workspace!.id, email: admin.user!.email, role: Role.ADMIN });
  await client.addMember({ workspaceId: workspace!.id, email: member.user!.email });
  return { owner: owner.user!, admin: admin.user!, member: member.user!, personal: owner.workspace!, workspace: workspace! };
}

/** An event as the gateway sends one: by the system unless `init` names an actor. */
function event(init: MessageInitShape<typeof AuditEventSchema>): AuditEvent {
  const defaults: MessageInitShape<typeof AuditEventSchema> = {
    id: newId(),
    occurredAt: timestampFromDate(new Date()),
    actor: { type: "system" },
    address: "203.0.113.9",
    action: "form.update",
    targetType: "form",
    targetId: "form1",
    requestId: "req-1",
  };
  return create(AuditEventSchema, { ...defaults, ...init } as MessageInitShape<typeof AuditEventSchema>);
}

const listed = async (workspaceId: string, userId: string, query: { action?: string; actor?: string; since?: Timestamp; until?: Timestamp } = {}) =>
  (await client.listAuditEvents({ workspaceId, ...query }, asCaller(userId))).events;

describe("RecordAuditEvents and ListAuditEvents", () => {
  it("records a workspace's event once however often it is sent, and lists it to the owner and admins with who, where, what and the changes", async () => {
    const { owner, admin, workspace } = await team();
    const sent = event({
      workspaceId: workspace.id,
      actor: { type: "api_key", userId: admin.id, apiKeyId: "key1" },
      changes: [{ field: "name", value: "Renamed" }, { field: "document" }],
    });
    assert.equal((await client.recordAuditEvents({ events: [sent] })).recorded, 1);
    // A batch sent again after a lost answer writes nothing more.
    assert.equal((await client.recordAuditEvents({ events: [sent] })).recorded, 0);
    for (const reader of [owner, admin]) {
      const [got, ...rest] = await listed(workspace.id, reader.id);
      assert.equal(rest.length, 0);
      assert.deepEqual(
        [got.id, got.workspaceId, got.actor?.type, got.actor?.userId, got.actor?.apiKeyId, got.address, got.action, got.targetType, got.targetId, got.requestId],
        [sent.id, workspace.id, "api_key", admin.id, "key1", "203.0.113.9", "form.update", "form", "form1", "req-1"],
      );
      assert.deepEqual(got.changes.map((c) => [c.field, c.value]), [["name", "Renamed"], ["document", undefined]]);
      assert.equal(timestampDate(got.occurredAt!).getTime(), timestampDate(sent.occurredAt!).getTime());
    }
  });

  it("answers a plain member, a stranger and an unknown workspace the same NOT_FOUND; the operator reads any", async () => {
    const { member, workspace } = await team();
    const stranger = await client.createUser({ email: uniqueEmail("stranger") });
    await client.recordAuditEvents({ events: [event({ workspaceId: workspace.id })] });
    for (const [workspaceId, userId] of [[workspace.id, member.id], [workspace.id, stranger.user!.id], ["nope", member.id]]) {
      await rejectsWith(client.listAuditEvents({ workspaceId }, asCaller(userId)), Code.NotFound, "workspace not found");
    }
    assert.equal((await client.listAuditEvents({ workspaceId: workspace.id })).events.length, 1);
  });

  it("refuses a caller's recording: nobody writes their own record", async () => {
    const { owner, workspace } = await team();
    await rejectsWith(client.recordAuditEvents({ events: [event({ workspaceId: workspace.id })] }, asCaller(owner.id)), Code.PermissionDenied);
    await rejectsWith(client.recordAuditEvents({ events: [event({ workspaceId: workspace.id, action: "" })] }), Code.InvalidArgument, "action is required");
    await rejectsWith(client.recordAuditEvents({ events: [event({ workspaceId: workspace.id, actor: { type: "root" } })] }), Code.InvalidArgument);
  });

  it("writes a personal event into every workspace of its person; a failed sign-in finds its account by email and keeps no email", async () => {
    const { owner, personal, workspace } = await team();
    const signIn = event({ personal: true, actor: { type: "user", userId: owner.id }, action: "session.sign_in", targetType: "user", targetId: owner.id });
    const failed = event({ personal: true, actor: { type: "anonymous" }, action: "session.sign_in_failed", targetType: "user", targetId: "", subjectEmail: owner.email.toUpperCase() });
    const nobody = event({ personal: true, actor: { type: "anonymous" }, action: "session.sign_in_failed", targetType: "user", targetId: "", subjectEmail: uniqueEmail("ghost") });
    assert.equal((await client.recordAuditEvents({ events: [signIn, failed, nobody] })).recorded, 5);
    for (const workspaceId of [personal.id, workspace.id]) {
      const events = await listed(workspaceId, owner.id);
      assert.deepEqual(events.map((e) => [e.action, e.targetId]).sort(), [["session.sign_in", owner.id], ["session.sign_in_failed", owner.id]]);
    }
    const rows = await sql(`select * from "identity"."audit_events" where "id" in (?, ?, ?)`, [signIn.id, failed.id, nobody.id]);
    assert.ok(!JSON.stringify(rows).includes(owner.email), "no email is stored");
    assert.deepEqual(rows.filter((r) => r.id === nobody.id).map((r) => [r.workspace_id, r.target_id]), [["", ""]]);
  });

  it("filters by action (or a record's every action), actor, since and until, and pages newest first by cursor", async () => {
    const { owner, admin, workspace } = await team();
    const base = Date.now() - 10 * 60_000;
    const at = (minutes: number) => timestampFromDate(new Date(base + minutes * 60_000));
    const events = [
      event({ workspaceId: workspace.id, occurredAt: at(1), action: "form.create", actor: { type: "user", userId: owner.id } }),
      event({ workspaceId: workspace.id, occurredAt: at(2), action: "form.publish", actor: { type: "api_key", userId: admin.id, apiKeyId: "k2" } }),
      event({ workspaceId: workspace.id, occurredAt: at(3), action: "webhook.create", actor: { type: "user", userId: admin.id } }),
      event({ workspaceId: workspace.id, occurredAt: at(4), action: "form.close", actor: { type: "system" } }),
    ];
    await client.recordAuditEvents({ events });
    const ids = (list: AuditEvent[]) => list.map((e) => e.id);
    const [create, publish, hook, close] = ids(events);
    assert.deepEqual(ids(await listed(workspace.id, owner.id)), [close, hook, publish, create]);
    assert.deepEqual(ids(await listed(workspace.id, owner.id, { action: "form.publish" })), [publish]);
    assert.deepEqual(ids(await listed(workspace.id, owner.id, { action: "form.*" })), [close, publish, create]);
    assert.deepEqual(ids(await listed(workspace.id, owner.id, { actor: admin.id })), [hook, publish]);
    assert.deepEqual(ids(await listed(workspace.id, owner.id, { actor: "k2" })), [publish]);
    assert.deepEqual(ids(await listed(workspace.id, owner.id, { actor: "system" })), [close]);
    assert.deepEqual(ids(await listed(workspace.id, owner.id, { since: at(2), until: at(4) })), [hook, publish]);

    const seen: string[] = [];
    let cursor = "";
    do {
      const page = await client.listAuditEvents({ workspaceId: workspace.id, limit: 3, cursor }, asCaller(owner.id));
      seen.push(...ids(page.events));
      cursor = page.nextCursor;
      // An event arriving during the walk is not seen again, nor does it shift the pages.
      if (cursor) await client.recordAuditEvents({ events: [event({ workspaceId: workspace.id })] });
    } while (cursor);
    assert.deepEqual(seen, [close, hook, publish, create]);
  });

  it("writes each recorded event once as a JSON line, with every workspace it went to", async () => {
    const { owner, personal, workspace } = await team();
    const signIn = event({ personal: true, actor: { type: "user", userId: owner.id }, action: "session.sign_in", targetType: "user", targetId: owner.id });
    lines.length = 0;
    await client.recordAuditEvents({ events: [signIn] });
    await client.recordAuditEvents({ events: [signIn] });
    assert.equal(lines.length, 1, "a repeat writes no line");
    const { auditEvent } = JSON.parse(lines[0]);
    assert.deepEqual(
      [auditEvent.id, auditEvent.action, auditEvent.actor, auditEvent.address, [...auditEvent.workspaceIds].sort()],
      [signIn.id, "session.sign_in", { type: "user", userId: owner.id, apiKeyId: null }, "203.0.113.9", [personal.id, workspace.id].sort()],
    );
  });
});

describe("RenameWorkspace", () => {
  it("renames for the owner, an admin and the operator; a plain member is refused, a stranger told it is not there", async () => {
    const { owner, admin, member, workspace } = await team();
    const stranger = await client.createUser({ email: uniqueEmail("stranger") });
    const renamed = await client.renameWorkspace({ workspaceId: workspace.id, name: "  Team two " }, asCaller(owner.id));
    assert.deepEqual([renamed.workspace?.name, renamed.workspace?.role], ["Team two", Role.OWNER]);
    assert.equal((await client.renameWorkspace({ workspaceId: workspace.id, name: "Team three" }, asCaller(admin.id))).workspace?.role, Role.ADMIN);
    assert.equal((await client.renameWorkspace({ workspaceId: workspace.id, name: "Team four" })).workspace?.name, "Team four");
    await rejectsWith(client.renameWorkspace({ workspaceId: workspace.id, name: "Mine" }, asCaller(member.id)), Code.PermissionDenied);
    await rejectsWith(client.renameWorkspace({ workspaceId: workspace.id, name: "Mine" }, asCaller(stranger.user!.id)), Code.NotFound, "workspace not found");
    await rejectsWith(client.renameWorkspace({ workspaceId: workspace.id, name: " " }, asCaller(owner.id)), Code.InvalidArgument, "name is required");
    assert.equal((await client.getWorkspace({ workspaceId: workspace.id }, asCaller(member.id))).workspace?.name, "Team four");
  });
});

describe("the audit_events table", () => {
  it("refuses UPDATE, DELETE and TRUNCATE; only retention's prune deletes, and only what is older than AUDIT_RETENTION_DAYS", async () => {
    const { workspace } = await team();
    const old = event({ workspaceId: workspace.id, occurredAt: timestampFromDate(new Date(Date.now() - 3 * day)) });
    const recent = event({ workspaceId: workspace.id, occurredAt: timestampFromDate(new Date(Date.now() - day / 2)) });
    await client.recordAuditEvents({ events: [old, recent] });
    const refused = /audit events are append-only/;
    await assert.rejects(sql(`update "identity"."audit_events" set "action" = 'form.create' where "id" = ?`, [old.id]), refused);
    await assert.rejects(sql(`delete from "identity"."audit_events" where "id" = ?`, [old.id]), refused);
    await assert.rejects(sql(`truncate "identity"."audit_events"`), refused);

    const target = identityRetention(orm, { safetySeconds: 3600, auditRetentionDays: 2 }).find((t) => t.what === "identity.audit_events")!;
    const now = new Date();
    assert.equal(target.olderThanAt(now)?.getTime(), now.getTime() - 2 * day);
    // The operator's prune to a later bound still keeps what is younger than the retention.
    assert.equal(await target.remove(new Date(Date.now() + day)), 1);
    const left = await sql(`select "id" from "identity"."audit_events" where "id" in (?, ?)`, [old.id, recent.id]);
    assert.deepEqual(left.map((r) => r.id), [recent.id]);
    // The prune's permission was its own transaction's.
    await assert.rejects(sql(`delete from "identity"."audit_events" where "id" = ?`, [recent.id]), refused);
  });
});
