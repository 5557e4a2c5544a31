import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { serviceNames } from "@formsvc/platform/config.ts";
import { oneProcessName } from "@formsvc/launcher/system.ts";
import { appClient } from "./support/app-client.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// ONE_PROCESS=on: every service and the gateway in one Node process, driven the way an operator's users
// would: a signup in the app, a form scripted over the API, a respondent, a signed webhook; then the
// supervisor restarting the process after a crash, and a SIGTERM that stops it cleanly.

let sys: TestSystem;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
before(async () => {
  receiver = await startReceiver();
  sys = await startTestSystem("one_process", { ONE_PROCESS: "on", WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
});
after(async () => {
  await sys?.stop();
  await receiver?.close();
});

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

describe("every service in one process (ONE_PROCESS)", () => {
  it("runs as one process that hosts each service on its own port", () => {
    assert.deepEqual([...sys.system.processes.keys()], [oneProcessName]);
    for (const name of [...serviceNames, "gateway"]) assert.ok(sys.system.ports.get(name), `${name} reported its port`);
    const pid = sys.system.processes.get(oneProcessName)!.pid!;
    console.log(`one process idle: ${rssMiB(pid).toFixed(0)} MiB resident`);
  });

  it("takes a signup, a scripted form, a response and its signed webhook, and reads the response back", async () => {
    const { call } = appClient(sys.url);
    await call("GET", "/session");
    const signup = await call("POST", "/auth/signup", { email: "grace@example.com", name: "Grace", password: "correct horse battery" });
    assert.equal(signup.status, 201, JSON.stringify(signup.body));
    assert.equal((await call("GET", "/workspaces")).body.items.length, 1);

    const ada = await createUserWithKey(sys, "ada@example.com");
    const document = { title: "Sign-up", blocks: [{ id: "name", key: "name", type: "SHORT_TEXT", question: "Your name", required: true }] };
    const form = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Sign-up", document });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    await sys.cli("form:publish", "--id", form.body.id);
    const hook = await ada.api("POST", "/webhooks", { formId: form.body.id, url: receiver.url });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));

    const page = await fetch(`${sys.url}/f/${form.body.id}`);
    assert.match(await page.text(), /Your name/);
    const posted = await fetch(`${sys.url}/f/${form.body.id}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers: { name: "Ada" }, completed: true }),
    });
    assert.equal(posted.status, 200, await posted.clone().text());
    const { responseId } = (await posted.json()) as { responseId: string };

    await receiver.waitFor(1);
    const [got] = receiver.received;
    assert.doesNotThrow(() => new StandardWebhook(hook.body.secret).verify(got.raw.toString("utf8"), got.headers as Record<string, string>));
    assert.equal(got.body.data.responseId, responseId);
    const listed = await ada.api("GET", `/forms/${form.body.id}/submissions`);
    assert.deepEqual(
      listed.body.items.map((s: { id: string }) => s.id),
      [responseId],
    );
    const counted = await eventuallyPasses(() => ada.api("GET", `/forms/${form.body.id}`), (res) => res.body.responseCount === 1);
    assert.equal(counted.body.responseCount, 1);
  });

  it("serves the process's metrics, every service's among them, at the gateway's /metrics", async () => {
    const text = await (await fetch(`${sys.url}/metrics`)).text();
    assert.match(text, new RegExp(`process_resident_memory_bytes\\{service="${oneProcessName}"\\}`));
    assert.match(text, /rpc_server_duration_seconds_count\{[^}]*method="[^"]*SaveResponse"/);
  });

  it("is restarted whole by the supervisor after a crash, and serves again", async () => {
    const restarted = sys.system.nextRestart(oneProcessName);
    const crashed = sys.system.processes.get(oneProcessName)!;
    crashed.kill("SIGKILL");
    const event = await restarted;
    assert.notEqual(event.pid, crashed.pid);
    assert.equal((await fetch(`${sys.url}/readyz`)).status, 200);
  });

  it("stops cleanly on SIGTERM: the gateway first, then the services, exit code 0", async () => {
    const child = sys.system.processes.get(oneProcessName)!;
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await sys.system.stop();
    assert.equal(await exited, 0);
  });
});
