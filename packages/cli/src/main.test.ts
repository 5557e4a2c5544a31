import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { FormSchema, FormStatus } from "@formsvc/proto/forms/v1/forms_pb.js";
import { ApiKeySchema, InvitationSchema, Plan, Role, UserSchema, WorkspaceSchema } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { ServiceName } from "@formsvc/platform/config.ts";
import type { Clients } from "./commands.ts";
import { runCli } from "./main.ts";

const at = timestampFromDate(new Date("2026-01-02T03:04:05.000Z"));
const user = create(UserSchema, { id: "u1", email: "a@example.com", name: "Ann", createdAt: at });
const workspace = create(WorkspaceSchema, { id: "w1", name: "Ann", plan: Plan.PRO, personal: true, ownerId: "u1", createdAt: at });
const invitation = create(InvitationSchema, {
  id: "i1",
  email: "new@example.com",
  workspaceId: "w1",
  workspaceName: "Ann",
  role: Role.ADMIN,
  inviterName: "The formsvc administrator",
  createdAt: at,
  expiresAt: at,
});
const apiKey = create(ApiKeySchema, { id: "k1", name: "first", prefix: "fk-ab12", createdAt: at });
const form = (status: FormStatus) => create(FormSchema, { id: "f1", workspaceId: "w1", name: "Survey", status, version: 2, responseCount: 5n, createdAt: at, updatedAt: at });

/** What each service's fake MaintenanceService answers Prune with. */
const prunedBy: Record<ServiceName, Record<string, bigint>> = {
  identity: { "identity.sessions": 3n, "identity.mail_outbox": 1n },
  forms: {},
  submissions: { "submissions.outbox": 5n },
  webhooks: {},
  delivery: { "delivery.deliveries": 7n },
};

/** Fake clients that record each call (method and request) and answer like the services. */
function fakeClients(calls: unknown[][], fail?: Error): Clients {
  const answer = (method: string, response: object) => async (req: object, options?: { headers?: unknown }) => {
    calls.push([method, req, options?.headers]);
    if (fail) throw fail;
    return response;
  };
  return {
    identity: {
      createUser: answer("createUser", { user, workspace }),
      setPassword: answer("setPassword", { user }),
      createWorkspace: answer("createWorkspace", { workspace }),
      addMember: answer("addMember", { workspace, user }),
      inviteMember: answer("inviteMember", { invited: true, invitation }),
      setPlan: answer("setPlan", { workspace }),
      createApiKey: answer("createApiKey", { apiKey, key: "fk-ab12secret" }),
      listApiKeys: answer("listApiKeys", { apiKeys: [apiKey] }),
      deleteApiKey: answer("deleteApiKey", {}),
      recordAuditEvents: answer("recordAuditEvents", { recorded: 1 }),
    },
    forms: {
      setFormStatus: answer("setFormStatus", { form: form(FormStatus.PUBLISHED) }),
      restoreForm: answer("restoreForm", { form: form(FormStatus.DRAFT) }),
    },
    maintenance: (service: ServiceName) => ({ prune: answer(`${service}.prune`, { removed: prunedBy[service] }) }),
  } as unknown as Clients;
}

async function run(argv: string[], fail?: Error, stdin = "") {
  const calls: unknown[][] = [];
  const result = await runCli(argv, { clients: fakeClients(calls, fail), env: {}, input: { stdin: async () => stdin } });
  return { ...result, calls, json: JSON.parse(result.stdout ?? result.stderr ?? "null") };
}

const userJson = { id: "u1", email: "a@example.com", name: "Ann", createdAt: "2026-01-02T03:04:05.000Z" };
const workspaceJson = { id: "w1", name: "Ann", plan: "pro", personal: true, entitlements: { removeBranding: false }, createdAt: "2026-01-02T03:04:05.000Z" };

describe("runCli", () => {
  test("user:create prints the user and the personal workspace", async () => {
    const r = await run(["user:create", "--email", "a@example.com", "--name", "Ann", "--plan", "pro"]);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, undefined);
    assert.ok(r.stdout!.endsWith("}\n") && r.stdout!.split("\n").length === 2, "one JSON object on one line");
    assert.deepEqual(r.json, { user: userJson, workspace: workspaceJson });
    const [method, req, headers] = r.calls[0] as [string, { email: string; name: string; plan: Plan }, unknown];
    assert.equal(method, "createUser");
    assert.deepEqual([req.email, req.name, req.plan], ["a@example.com", "Ann", Plan.PRO]);
    assert.equal(headers, undefined, "operator calls carry no caller header");
  });

  test("user:create without --plan leaves the plan to the service", async () => {
    const r = await run(["user:create", "--email", "a@example.com"]);
    assert.deepEqual(r.calls[0][1], { email: "a@example.com", name: "", plan: Plan.UNSPECIFIED, password: "" });
  });

  test("user:create --password-stdin sends the first line of standard input as the password", async () => {
    const r = await run(["user:create", "--email", "a@example.com", "--password-stdin"], undefined, "correct horse battery staple\r\nignored\n");
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.calls[0][1], { email: "a@example.com", name: "", plan: Plan.UNSPECIFIED, password: "correct horse battery staple" });
    assert.doesNotMatch(r.stdout!, /horse/, "the password is never printed");
  });

  test("user:set-password reads the password from standard input and prints the user", async () => {
    const r = await run(["user:set-password", "--email", "a@example.com", "--password-stdin"], undefined, "correct horse battery staple\n");
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.calls, [["setPassword", { email: "a@example.com", password: "correct horse battery staple" }, undefined]]);
    assert.deepEqual(r.json, { user: userJson });
  });

  test("--password-stdin with nothing on standard input is a usage error that calls nothing", async () => {
    for (const argv of [["user:set-password", "--email", "a@example.com", "--password-stdin"], ["user:create", "--email", "a@example.com", "--password-stdin"]]) {
      const r = await run(argv, undefined, "\n");
      assert.equal(r.code, 1);
      assert.deepEqual(r.json, { error: "--password-stdin: no password on standard input" });
      assert.deepEqual(r.calls, []);
    }
  });

  test("the other commands print their records", async () => {
    const cases: [string[], string, object, object][] = [
      [["workspace:create", "--owner", "a@example.com", "--name", "Team"], "createWorkspace", { ownerEmail: "a@example.com", name: "Team", plan: Plan.UNSPECIFIED }, { workspace: workspaceJson }],
      [["workspace:add-member", "--workspace", "w1", "--email", "b@example.com"], "addMember", { workspaceId: "w1", email: "b@example.com" }, { workspace: workspaceJson, user: userJson }],
      [["workspace:set-plan", "--workspace", "w1", "--plan", "free"], "setPlan", { workspaceId: "w1", plan: Plan.FREE }, { workspace: workspaceJson }],
      [["key:create", "--email", "a@example.com", "--name", "first"], "createApiKey", { email: "a@example.com", name: "first" }, { id: "k1", name: "first", key: "fk-ab12secret", prefix: "fk-ab12", createdAt: "2026-01-02T03:04:05.000Z" }],
      [["key:list", "--email", "a@example.com"], "listApiKeys", { email: "a@example.com" }, { keys: [{ id: "k1", name: "first", prefix: "fk-ab12", createdAt: "2026-01-02T03:04:05.000Z", lastUsedAt: null }] }],
      [["key:delete", "--id", "k1"], "deleteApiKey", { id: "k1" }, { deleted: true, id: "k1" }],
      [["user:invite", "--workspace", "w1", "--email", "New@Example.com", "--role", "admin"], "inviteMember", { workspaceId: "w1", email: "New@Example.com", role: Role.ADMIN }, { id: "i1", email: "new@example.com", workspaceId: "w1", workspaceName: "Ann", role: "admin", inviterName: "The formsvc administrator", createdAt: "2026-01-02T03:04:05.000Z", expiresAt: "2026-01-02T03:04:05.000Z" }],
    ];
    for (const [argv, method, request, output] of cases) {
      const r = await run(argv);
      assert.equal(r.code, 0, argv.join(" "));
      assert.deepEqual(r.calls.filter(([called]) => called !== "recordAuditEvents"), [[method, request, undefined]], argv.join(" "));
      assert.deepEqual(r.json, output, argv.join(" "));
    }
  });

  test("the commands that change a workspace's log record it as the system's, without a secret; a failed recording only warns", async () => {
    const recorded = (r: Awaited<ReturnType<typeof run>>) =>
      r.calls.filter(([called]) => called === "recordAuditEvents").map(([, req]) => (req as { events: Record<string, unknown>[] }).events[0]);
    const cases: [string[], object][] = [
      [["workspace:set-plan", "--workspace", "w1", "--plan", "pro"], { action: "workspace.set_plan", targetId: "w1", workspaceId: "w1", changes: [{ field: "plan", value: "pro" }] }],
      [["key:create", "--email", "a@example.com", "--name", "first"], { action: "api_key.create", targetId: "k1", personal: true, subjectEmail: "a@example.com" }],
      [["key:delete", "--id", "k1"], { action: "api_key.delete", targetId: "k1", workspaceId: "" }],
      [["form:close", "--id", "f1"], { action: "form.close", targetType: "form", targetId: "f1", workspaceId: "w1" }],
      [["user:invite", "--workspace", "w1", "--email", "new@example.com"], { action: "member.invite", targetType: "invitation", targetId: "i1", workspaceId: "w1" }],
    ];
    for (const [argv, expected] of cases) {
      const r = await run(argv);
      const [event] = recorded(r);
      assert.ok(event, argv.join(" "));
      assert.deepEqual((event as { actor: unknown }).actor, { type: "system" });
      for (const [field, value] of Object.entries(expected)) assert.deepEqual(event[field], value, `${argv.join(" ")}: ${field}`);
      assert.ok(!JSON.stringify(event, (_key, value) => (typeof value === "bigint" ? String(value) : value)).includes("fk-ab12secret"), "the key is never recorded");
    }
    const calls: unknown[][] = [];
    const clients = fakeClients(calls);
    clients.identity.recordAuditEvents = (async () => {
      throw new ConnectError("identity is down", Code.Unavailable);
    }) as unknown as typeof clients.identity.recordAuditEvents;
    const unrecorded = await runCli(["workspace:set-plan", "--workspace", "w1", "--plan", "pro"], { clients, env: {} });
    assert.equal(unrecorded.code, 0);
    assert.equal(JSON.parse(unrecorded.stdout!).workspace.id, "w1");
    assert.match(JSON.parse(unrecorded.stderr!).warning, /^done, but not recorded in the audit log: /);
  });

  test("form:publish, form:close and form:restore set the status or restore, and print the form", async () => {
    for (const [argv, method, request] of [
      [["form:publish", "--id", "f1"], "setFormStatus", { id: "f1", status: FormStatus.PUBLISHED }],
      [["form:close", "--id", "f1"], "setFormStatus", { id: "f1", status: FormStatus.CLOSED }],
      [["form:restore", "--id", "f1"], "restoreForm", { id: "f1" }],
    ] as const) {
      const r = await run([...argv]);
      assert.equal(r.code, 0);
      assert.deepEqual(r.calls.filter(([called]) => called !== "recordAuditEvents"), [[method, request, undefined]]);
      assert.equal(r.json.form.id, "f1");
      assert.equal(r.json.form.responseCount, 5);
    }
  });

  test("prune asks every service with a database, and prints the rows of all of them by table", async () => {
    for (const [dryRun, argv] of [
      [true, ["prune", "--dry-run", "--older-than", "2026-11-01T09:30:00+01:00"]],
      [false, ["prune", "--older-than", "2026-11-01T09:30:00+01:00"]],
    ] as const) {
      const r = await run([...argv]);
      assert.equal(r.code, 0, r.stderr);
      const request = { olderThanMs: BigInt(Date.parse("2026-11-01T08:30:00Z")), dryRun };
      assert.deepEqual(
        r.calls,
        ["identity", "forms", "submissions", "webhooks", "delivery"].map((service) => [`${service}.prune`, request, undefined]),
      );
      assert.deepEqual(r.json, { "identity.sessions": 3, "identity.mail_outbox": 1, "submissions.outbox": 5, "delivery.deliveries": 7 });
    }
  });

  test("prune names the address of the service that could not be reached, after the others have answered", async () => {
    const calls: unknown[][] = [];
    const clients = fakeClients(calls);
    const answering = clients.maintenance;
    clients.maintenance = (service) =>
      service === "webhooks"
        ? ({ prune: async () => Promise.reject(new ConnectError("connect ECONNREFUSED 127.0.0.1:9", Code.Unavailable)) } as unknown as ReturnType<Clients["maintenance"]>)
        : answering(service);
    const result = await runCli(["prune", "--older-than", "2026-11-01"], { clients, env: { WEBHOOKS_URL: "http://127.0.0.1:9" } });
    assert.equal(result.code, 1);
    assert.match(JSON.parse(result.stderr!).error, /^the services are not running at http:\/\/127\.0\.0\.1:9 /);
    assert.deepEqual(
      calls.map(([method]) => method),
      ["identity.prune", "forms.prune", "submissions.prune", "delivery.prune"],
    );
  });

  test("usage mistakes are {error} on stderr with code 1, and call nothing", async () => {
    for (const argv of [["nope"], ["key:list"], ["user:create", "--email", "a", "--plan", "gold"], [], ["prune"], ["prune", "--older-than", "last week"], ["prune", "--older-than", "2026-11-01", "--dry-run=yes"]]) {
      const r = await run(argv);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, undefined);
      assert.deepEqual(Object.keys(r.json), ["error"]);
      assert.deepEqual(r.calls, []);
    }
  });

  test("help lists every command", async () => {
    const r = await run(["help"]);
    assert.equal(r.code, 0);
    assert.equal(r.json.commands["key:create"].usage, "key:create --email E --name N");
  });

  test("version prints the root package.json's version and calls nothing", async () => {
    const r = await run(["version"]);
    assert.equal(r.code, 0, r.stderr);
    const root = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"));
    assert.deepEqual(r.json, { version: root.version });
    assert.deepEqual(r.calls, []);
    assert.equal(r.stdout, `{"version":"${root.version}"}\n`);
  });

  test("backup and restore are listed, and restore without --yes changes nothing", async () => {
    const help = (await run(["help"])).json;
    assert.equal(help.commands.backup.usage, "backup --out FILE");
    assert.equal(help.commands.restore.usage, "restore --from FILE [--yes]");
    const r = await run(["restore", "--from", "/nonexistent/backup.tar.gz"]);
    assert.equal(r.code, 1);
    assert.match(r.json.error, /add --yes to go ahead/);
  });

  test("an RPC error shows its own message, without the code prefix; not found says which address was asked", async () => {
    const r = await run(["key:delete", "--id", "k9"], new ConnectError("API key not found", Code.NotFound));
    assert.equal(r.code, 1);
    assert.deepEqual(r.json, {
      error:
        "API key not found (asked the identity service at http://127.0.0.1:8081; if your system runs elsewhere, give the CLI the environment npm start has (IDENTITY_URL))",
    });
    const elsewhere = await runCli(["key:list", "--email", "nobody@example.com"], {
      clients: fakeClients([], new ConnectError("user not found", Code.NotFound)),
      env: { IDENTITY_URL: "http://127.0.0.1:9" },
    });
    assert.match(JSON.parse(elsewhere.stderr!).error, /^user not found \(asked the identity service at http:\/\/127\.0\.0\.1:9; /);
    const badRequest = await run(["key:delete", "--id", "k9"], new ConnectError("id: is required", Code.InvalidArgument));
    assert.deepEqual(badRequest.json, { error: "id: is required" });
  });

  test("a service that is up but unavailable (its database is down) says so and to try again", async () => {
    const result = await runCli(["key:list", "--email", "a@example.com"], {
      clients: fakeClients([], new ConnectError("the database is unavailable", Code.Unavailable)),
      env: { IDENTITY_URL: "http://127.0.0.1:9" },
    });
    assert.equal(result.code, 1);
    assert.deepEqual(JSON.parse(result.stderr!), {
      error: "the service at http://127.0.0.1:9 is unavailable right now (the database is unavailable); try again shortly",
    });
  });

  test("services that are not running are named with their address", async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer().listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const result = await runCli(["key:list", "--email", "a@example.com"], { env: { IDENTITY_URL: `http://127.0.0.1:${port}` } });
    assert.equal(result.code, 1);
    const { error } = JSON.parse(result.stderr!);
    assert.match(error, new RegExp(`^the services are not running at http://127\\.0\\.0\\.1:${port} `));
    assert.match(error, /start them with npm start, or set IDENTITY_URL to where they run$/);
    const env = Object.fromEntries(["IDENTITY_URL", "FORMS_URL", "SUBMISSIONS_URL", "WEBHOOKS_URL", "DELIVERY_URL"].map((name) => [name, `http://127.0.0.1:${port}`]));
    const pruned = await runCli(["prune", "--older-than", "2026-11-01", "--dry-run"], { env });
    assert.equal(pruned.code, 1);
    assert.match(JSON.parse(pruned.stderr!).error, new RegExp(`^the services are not running at http://127\\.0\\.0\\.1:${port} `));
  });
});
