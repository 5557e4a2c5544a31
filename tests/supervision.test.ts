import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RestartEvent } from "@formsvc/launcher/system.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { assertStoredAndDelivered, secondsUntilServed, startRespondentLoad } from "./support/respondent-load.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// An operator's SIGKILL of each process in turn (every service, then the gateway) while respondents keep
// posting: the launcher's supervisor brings each back by itself, and nothing answered 2xx is lost.

let sys: TestSystem;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
before(async () => {
  receiver = await startReceiver();
  sys = await startTestSystem("supervision", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_RETRY_SCHEDULE: "0.2,0.4,0.8,1,1,1,1,1,1,1" });
});
after(async () => {
  await sys?.stop();
  await receiver?.close();
});

describe("the launcher's supervisor under load", () => {
  it("restarts each killed process, serves again by itself and loses no stored response", { timeout: 600_000 }, async () => {
    const ada = await createUserWithKey(sys, "supervised@example.com");
    const form = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      name: "Supervised",
      document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] },
    });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    await sys.cli("form:publish", "--id", form.body.id);
    const hook = await ada.api("POST", "/webhooks", { formId: form.body.id, url: receiver.url });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));

    const authorized = { headers: { authorization: `Bearer ${ada.key}` } };
    const api = (path: string) => () => fetch(`${sys.url}/api/v1${path}`, authorized);
    // Each process is judged by a request that needs it (every /api/v1 call needs identity for the key).
    const needs: Record<string, () => Promise<Response>> = {
      identity: api("/users/me"),
      forms: api(`/forms/${form.body.id}`),
      submissions: api(`/forms/${form.body.id}/submissions`),
      webhooks: api(`/webhooks/${hook.body.id}`),
      delivery: api(`/webhooks/${hook.body.id}/deliveries`),
      gateway: api("/users/me"),
    };

    const load = startRespondentLoad(sys.url, form.body.id);
    // When each process was killed: a failed answer is reported with the process that was down when it was sent.
    const kills: { name: string; at: number }[] = [];
    const figures: Record<string, { servedAgainSeconds: number; restartedAfterSeconds: number }> = {};
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      for (const [name, request] of Object.entries(needs)) {
        const before = load.stored.length;
        const restarted = sys.system.nextRestart(name);
        const pid = sys.system.processes.get(name)!.pid!;
        kills.push({ name, at: Date.now() });
        process.kill(pid, "SIGKILL");
        const servedAgainSeconds = await secondsUntilServed(request);
        const event: RestartEvent = await restarted;
        assert.equal(event.signal, "SIGKILL");
        assert.notEqual(event.pid, pid);
        figures[name] = { servedAgainSeconds: Number(servedAgainSeconds.toFixed(2)), restartedAfterSeconds: Number((event.downMs / 1000).toFixed(2)) };
        // Respondents are stored again after the restart, whichever process it was.
        await eventuallyPasses(async () => load.stored.length, (n) => n > before + 5, 60_000, 100);
      }
    } finally {
      await load.stop();
    }
    console.log(`supervision figures (seconds from SIGKILL): ${JSON.stringify(figures)}`);

    // Failures while a process was down were answered (never a 4xx) or refused, and are the respondent's to retry.
    const failed = load.answers.filter((a) => a.status < 200 || a.status >= 300);
    const refusedOrAnswered = (a: { status: number }) => a.status === 0 || a.status >= 500;
    const killedAt = (at: number) => kills.findLast((k) => k.at <= at);
    const withPhase = (a: (typeof failed)[number]) => {
      const kill = killedAt(a.at);
      return { ...a, killed: kill?.name ?? null, msAfterKill: kill ? a.at - kill.at : 0 };
    };
    assert.ok(failed.every(refusedOrAnswered), JSON.stringify(failed.filter((a) => !refusedOrAnswered(a)).slice(0, 5).map(withPhase)));
    console.log(`respondent POSTs: ${load.answers.length}, stored ${load.stored.length}, failed ${failed.length}`);

    // Every stored response is kept and delivered.
    await assertStoredAndDelivered(ada.api, form.body.id, load.stored, receiver);
  });
});
