// A Java client generated from the served OpenAPI document by OpenAPI Generator (`-g java --library native`,
// integrations/java/pom.xml, from Maven Central), compiled, and run against the whole system by a smoke program
// (integrations/java/src/main/java/formsvc/example/Smoke.java): the document must make a client that compiles
// and talks to the service, as it does for integrators who generate one.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startReceiver } from "./support/receiver.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

const run = promisify(execFile);
const pom = join(repoRoot, "integrations/java/pom.xml");

describe("a Java client generated from the served document", () => {
  let sys: TestSystem;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let buildDir: string;
  /** The smoke program's classpath, once the first test built it. */
  let classpath: string;
  const smoke = async (...args: string[]) => {
    const { stdout } = await run("java", ["-cp", classpath, "formsvc.example.Smoke", ...args]);
    return JSON.parse(stdout.trim().split("\n").at(-1)!);
  };

  before(async () => {
    buildDir = mkdtempSync(join(tmpdir(), "formsvc-java-client-"));
    receiver = await startReceiver();
    sys = await startTestSystem("java_client", { WEBHOOK_ALLOW_PRIVATE_URLS: "true", WEBHOOK_RETRY_SCHEDULE: "0.5" });
  });
  after(async () => {
    await sys?.stop();
    await receiver?.close();
    rmSync(buildDir, { recursive: true, force: true });
  });

  it("compiles, creates a form and its webhook, reads a response back, and the webhook arrives", { timeout: 600_000 }, async (t) => {
    const served = await fetch(`${sys.url}/developers/openapi.json`);
    assert.equal(served.status, 200);
    const spec = join(buildDir, "openapi.json");
    writeFileSync(spec, await served.text());

    const began = performance.now();
    await run("mvn", ["-q", "-B", "-Dstyle.color=never", "-f", pom, `-Dopenapi.spec=${spec}`, `-DbuildDir=${buildDir}/target`, "package"], {
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string }) => {
      // Maven prints a compile error on stdout: the generated code's line is what the failure is about.
      throw new Error(`the generated client did not build:\n${(err.stdout ?? "").split("\n").filter((l) => l.includes("ERROR")).slice(0, 20).join("\n")}${err.stderr ?? ""}`);
    });
    t.diagnostic(`generated and compiled in ${((performance.now() - began) / 1000).toFixed(1)} s`);
    classpath = [join(buildDir, "target/classes"), readFileSync(join(buildDir, "target/runtime.classpath"), "utf8").trim()].join(":");

    const { workspace, key } = await createUserWithKey(sys, "java@example.com");
    const created = await smoke("create", sys.url, key, workspace.id, receiver.url);
    assert.equal(created.error, undefined, JSON.stringify(created));
    assert.equal(created.email, "java@example.com");
    assert.equal(created.forms, 1);
    assert.equal(created.questionTypes, "SHORT_TEXT,NUMBER,RESPONDENT_COUNTRY");
    assert.equal(created.sameWebhookAgain, true, "a subscriber's second POST answers the webhook it has");

    await sys.cli("form:publish", "--id", created.formId);
    const answered = await smoke("respond", sys.url, key, created.formId, created.webhookId);
    assert.equal(answered.error, undefined, JSON.stringify(answered));
    assert.equal(answered.submissions, 1);
    assert.equal(answered.name, "Ada");
    assert.equal(answered.guests, 2);
    assert.equal(answered.webhookUrl, receiver.url);
    assert.equal(typeof answered.deliveries, "number", "a page of delivery receipts reads into its model");

    await receiver.waitFor(1);
    assert.equal(receiver.received[0]?.body?.data?.responseId, answered.responseId);
  });

  it("a bad key is an ApiException with the JSON error, not a crash", async () => {
    const out = await smoke("create", sys.url, "fk-not-a-key", "ws", receiver.url);
    assert.equal(out.status, 401);
    assert.match(out.error, /"error"/);
  });
});
