import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Client } from "@connectrpc/connect";
import { manyOptions, slowExpression } from "@formsvc/form-document/testing/slow-calculated-field";
import { freePort } from "@formsvc/launcher/ports.ts";
import { asCaller } from "@formsvc/platform/caller.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

// One tenant's costly calculated field must not stall the others: costly shapes are refused when the
// form is saved, and what passes but still runs long (a comprehension inside another over a long list
// answer) is cut off by the submissions worker pool's deadline, storing null.
// The deadline leaves B's trivial evaluations room on a starved 2-core machine (one took over 100 ms
// there) while still cutting A's, which runs over a second.
let sys: TestSystem;
let metricsPort: number;
let ada: Awaited<ReturnType<typeof createUserWithKey>>;
let bob: Awaited<ReturnType<typeof createUserWithKey>>;
let submissions: Client<typeof SubmissionsService>;
before(async () => {
  metricsPort = await freePort();
  sys = await startTestSystem("calculated_fields_cost", { SUBMISSIONS_METRICS_PORT: String(metricsPort), CALCULATED_FIELD_TIMEOUT_MS: "400" });
  ada = await createUserWithKey(sys, "ada@example.com");
  bob = await createUserWithKey(sys, "bob@example.com");
  submissions = createServiceClient(SubmissionsService, sys.env.SUBMISSIONS_URL);
});
after(() => sys?.stop());

const allTicked = manyOptions.map((o) => o.id);

/** Form A: passes the save check, but over every option ticked runs for over a second. */
const slowDocument = {
  blocks: [{ id: "tags", key: "tags", type: "CHECKBOXES", question: "Pick any", options: manyOptions }],
  calculatedFields: [{ name: "slow", type: "NUMBER", expression: slowExpression }],
};
/** Form B: an ordinary form with an ordinary calculated field. */
const normalDocument = {
  blocks: [{ id: "stars", key: "stars", type: "RATING", question: "How was it?", max: 5 }],
  calculatedFields: [{ name: "doubled", type: "NUMBER", expression: "stars * 2" }],
};

async function publishedForm(user: typeof ada, document: object): Promise<string> {
  const res = await user.api("POST", "/forms", { workspaceId: user.workspace.id, name: "Form", document });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  await sys.cli("form:publish", "--id", res.body.id);
  return res.body.id;
}

async function respond(formId: string, answers: object): Promise<string> {
  const res = await fetch(`${sys.url}/f/${formId}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ answers, completed: true }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.responseId;
}

/** `n` completed responses to form B, one after another: their ids and milliseconds each. */
async function respondInTurn(formId: string, n: number): Promise<{ ids: string[]; times: number[] }> {
  const ids: string[] = [];
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    ids.push(await respond(formId, { stars: 1 + (i % 5) }));
    times.push(performance.now() - started);
  }
  return { ids, times };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timeoutsMetric(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("calculated_field_timeouts_total") && l.includes('reason="deadline"'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("calculated fields cost", () => {
  it("refuses a costly expression when the form is created, naming the field", async () => {
    const nested = "l.all(a, l.all(b, l.all(c, a + b + c > 0)))";
    const res = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      document: { blocks: [], calculatedFields: [{ name: "fine", type: "NUMBER", expression: "1.0" }, { name: "costly", type: "NUMBER", expression: nested }] },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, "body.document.calculatedFields[1].expression: runs 3 comprehensions inside one another; at most 2");
    const broken = await ada.api("POST", "/forms", {
      workspaceId: ada.workspace.id,
      document: { blocks: [], calculatedFields: [{ name: "broken", type: "NUMBER", expression: "1 +" }] },
    });
    assert.equal(broken.status, 400);
    assert.match(broken.body.error, /^body\.document\.calculatedFields\[0\]\.expression: does not parse: /);
  });

  it("keeps another tenant's submissions quick while a slow expression's responses pour in, and stores the slow one as null", async () => {
    const slowForm = await publishedForm(ada, slowDocument);
    const normalForm = await publishedForm(bob, normalDocument);
    // Medians of many samples each, so that a few slow requests on a busy machine do not move them.
    const n = 60;

    // Warm up both paths (workers started, versions cached), then measure B alone.
    await respond(normalForm, { stars: 3 });
    await respond(slowForm, { tags: allTicked });
    const quiet = (await respondInTurn(normalForm, n)).times;

    // Form A's respondents: four at a time, without pause, until B's measure is done.
    let loading = true;
    const slowIds: string[] = [];
    const load = Array.from({ length: 4 }, async () => {
      while (loading) slowIds.push(await respond(slowForm, { tags: allTicked }));
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { ids: loadedIds, times: loaded } = await respondInTurn(normalForm, n);
    loading = false;
    await Promise.all(load);

    // The figure is printed for the record, not asserted (timings belong to benchmarks); what is asserted is
    // the pool's rule that makes it hold: A's overrunning evaluations never take B's worker, so every one of
    // B's responses made during A's load got its calculated value, and none of B's was cut off.
    console.log(
      `form B submit latency, median of ${n}: quiet ${median(quiet).toFixed(1)} ms, while form A's responses (${slowIds.length}) ` +
        `came in ${median(loaded).toFixed(1)} ms; ratio ${(median(loaded) / median(quiet)).toFixed(2)}`,
    );
    assert.ok(slowIds.length >= 4, "form A's responses were stored meanwhile");
    for (const id of loadedIds) {
      const during = await bob.api("GET", `/forms/${normalForm}/submissions/${id}`);
      assert.equal(during.status, 200);
      assert.equal(during.body.answers["calculated:doubled"].value, during.body.answers.stars.value * 2, `response ${id}`);
    }

    const slow = await ada.api("GET", `/forms/${slowForm}/submissions/${slowIds[0]}`);
    assert.equal(slow.status, 200);
    assert.deepEqual(slow.body.answers["calculated:slow"], { questionId: "calculated:slow", type: "CALCULATED_FIELD", label: "slow", value: null });
    assert.ok((await timeoutsMetric()) >= 1, "calculated_field_timeouts_total counts the cut-off evaluations");

    // Reported on the form, to its owner (the app's Build page shows it), not to others.
    const problems = await submissions.listCalculatedFieldProblems({ formId: slowForm }, asCaller(ada.user.id));
    const slowProblem = problems.problems.find((p) => p.field === "slow" && p.reason === "deadline");
    assert.ok(slowProblem && slowProblem.count >= 1n, JSON.stringify(problems.problems.map((p) => [p.field, p.reason])));
    assert.deepEqual((await submissions.listCalculatedFieldProblems({ formId: normalForm }, asCaller(bob.user.id))).problems, []);
    await assert.rejects(submissions.listCalculatedFieldProblems({ formId: slowForm }, asCaller(bob.user.id)), /not found/);
  });
});
