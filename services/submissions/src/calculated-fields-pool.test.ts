import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, describe, it } from "node:test";
import type { Logger } from "@formsvc/platform/logger.ts";
import { expressionProblem, type FormDocument } from "@formsvc/form-document";
import { manyOptions, slowExpression } from "@formsvc/form-document/testing/slow-calculated-field";
import { metrics } from "@formsvc/platform/metrics.ts";
import type { StoredAnswers } from "./answers/stored-answer.ts";
import { createCalculatedFieldsPool, type CalculatedFieldsPool } from "./calculated-fields-pool.ts";

const document = (calculatedFields: FormDocument["calculatedFields"]): FormDocument => ({
  blocks: [
    { id: "b1", key: "stars", type: "RATING", question: "Stars" },
    { id: "b2", key: "tags", type: "CHECKBOXES", question: "Tags", options: manyOptions },
  ],
  calculatedFields,
});
const answers: StoredAnswers = {
  stars: { questionId: "b1", type: "RATING", label: "Stars", value: 4 },
  // Every option ticked: the longest list answer a form can have.
  tags: { questionId: "b2", type: "CHECKBOXES", label: "Tags", value: manyOptions.map((o) => o.id) },
};

async function timeouts(reason: string): Promise<number> {
  const metric = await metrics.getSingleMetric("calculated_field_timeouts_total")?.get();
  return metric?.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

const valuesOf = (results: StoredAnswers) => Object.fromEntries(Object.entries(results).map(([k, a]) => [k, a.value]));
const quickDoc = document([{ name: "quick", type: "NUMBER", expression: "stars + 1" }]);
const slowDoc = document([{ name: "slow", type: "NUMBER", expression: slowExpression }]);

/** Evaluates a quick field until a worker gives its value (a worker's start can outlast a short queue deadline). */
async function warm(pool: CalculatedFieldsPool, workspaceId: string): Promise<void> {
  while (valuesOf(await pool.evaluate({ formId: "f-warm", workspaceId, document: quickDoc, answers }))["calculated:quick"] !== 5) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A logger that keeps its error messages. */
function recordingLogger() {
  const errors: string[] = [];
  const ignore = () => {};
  const logger = { error: (_: unknown, message: string) => void errors.push(message), warn: ignore, info: ignore } as unknown as Logger;
  return { errors, logger };
}

describe("calculated fields pool", () => {
  // Deadlines far above what the expected values take, so that GC or a busy CPU cannot cut them to null;
  // the cut-off tests use a pool of their own with a short one.
  const pool = createCalculatedFieldsPool({ size: 2, deadlineMs: 2_000 });
  const short = createCalculatedFieldsPool({ size: 2, deadlineMs: 300, maxQueuedPerWorkspace: 2 });
  after(() => Promise.all([pool.close(), short.close()]));

  it("evaluates on a worker thread and stores CALCULATED_FIELD answers", async () => {
    const results = await pool.evaluate({ formId: "f1", workspaceId: "w1", document: document([{ name: "next", type: "NUMBER", expression: "stars + 1" }]), answers });
    assert.deepEqual(results, { "calculated:next": { questionId: "calculated:next", type: "CALCULATED_FIELD", label: "next", value: 5 } });
  });

  it("gives nothing, without a worker, for a document without calculated fields", async () => {
    assert.deepEqual(await pool.evaluate({ formId: "f1", workspaceId: "w1", document: document(undefined), answers }), {});
  });

  it("cuts off an evaluation past its deadline: the fields before keep their values, the slow one and those after store null", async () => {
    assert.equal(expressionProblem(slowExpression), undefined, "the slow expression passes the save check");
    const before = await timeouts("deadline");
    const results = await short.evaluate({
      formId: "f-slow",
      workspaceId: "w-slow",
      document: document([
        { name: "first", type: "NUMBER", expression: "stars * 2" },
        { name: "slow", type: "NUMBER", expression: slowExpression },
        { name: "after", type: "TEXT", expression: "'fine'" },
      ]),
      answers,
    });
    assert.deepEqual(valuesOf(results), { "calculated:first": 8, "calculated:slow": null, "calculated:after": null });
    // Cut at the deadline: run to its end, the slow field would be 1.
    assert.equal(await timeouts("deadline"), before + 1);

    // The worker was replaced: the next evaluations work.
    const next = await short.evaluate({ formId: "f-slow", workspaceId: "w-slow", document: document([{ name: "after", type: "TEXT", expression: "'fine'" }]), answers });
    assert.deepEqual(valuesOf(next), { "calculated:after": "fine" });
  });

  it("runs one evaluation per workspace at a time, and another workspace's goes past a slow one's queue", async () => {
    const order: string[] = [];
    const slowOnes = [1, 2].map((i) =>
      short.evaluate({ formId: "f-slow", workspaceId: "w-slow", document: slowDoc, answers }).then((r) => {
        order.push(`slow${i}`);
        return r;
      }),
    );
    const quick = short.evaluate({ formId: "f-quick", workspaceId: "w-quick", document: quickDoc, answers }).then((r) => {
      order.push("quick");
      return r;
    });
    const [first, second, fast] = await Promise.all([...slowOnes, quick]);
    assert.deepEqual(valuesOf(fast), { "calculated:quick": 5 });
    assert.deepEqual([valuesOf(first!), valuesOf(second!)], [{ "calculated:slow": null }, { "calculated:slow": null }]);
    assert.ok(order.indexOf("quick") < order.indexOf("slow2"), `order: ${order.join(", ")}`);
  });

  it("stores null at once, counted as busy, when a workspace has too many evaluations waiting", async () => {
    // A worker is ready and the workspace has not gone past the deadline yet: the first evaluation runs at once.
    await short.evaluate({ formId: "f-busy", workspaceId: "w-busy", document: document([{ name: "one", type: "NUMBER", expression: "1.0" }]), answers });
    const before = await timeouts("busy");
    // One runs, two wait (the most allowed), the fourth is shed.
    const all = [1, 2, 3, 4].map(() => short.evaluate({ formId: "f-slow", workspaceId: "w-busy", document: slowDoc, answers }));
    const shed = await Promise.race([all[3]!, new Promise((resolve) => setTimeout(resolve, 50, "waiting"))]);
    assert.deepEqual(valuesOf(shed as StoredAnswers), { "calculated:slow": null });
    assert.equal(await timeouts("busy"), before + 1);
    await Promise.all(all);
  });

  it("lets the first evaluations wait for a worker to start, whatever the queue deadline", async () => {
    const cold = createCalculatedFieldsPool({ size: 1, deadlineMs: 2_000, queueDeadlineMs: 1 });
    try {
      assert.deepEqual(valuesOf(await cold.evaluate({ formId: "f-cold", workspaceId: "w-a", document: quickDoc, answers })), { "calculated:quick": 5 });
    } finally {
      await cold.close();
    }
  });

  it("stores null for an evaluation that waited past its queue deadline, counted as queued", async () => {
    const one = createCalculatedFieldsPool({ size: 1, deadlineMs: 30_000, queueDeadlineMs: 200 });
    try {
      await warm(one, "w-a");
      const before = await timeouts("queued");
      // The slow one (over a second) takes the only worker; the next waits past its 200 ms.
      const running = one.evaluate({ formId: "f-slow", workspaceId: "w-a", document: slowDoc, answers });
      const waiting = await one.evaluate({ formId: "f-quick", workspaceId: "w-b", document: quickDoc, answers });
      assert.deepEqual(valuesOf(waiting), { "calculated:quick": null });
      assert.equal(await timeouts("queued"), before + 1);
      assert.deepEqual(valuesOf(await running), { "calculated:slow": 1 });
    } finally {
      await one.close();
    }
  });

  it("stops waiting when the caller's signal aborts, and frees its place in the queue", async () => {
    const one = createCalculatedFieldsPool({ size: 1, deadlineMs: 30_000, maxQueuedPerWorkspace: 1 });
    try {
      await warm(one, "w-a");
      const running = one.evaluate({ formId: "f-slow", workspaceId: "w-a", document: slowDoc, answers });
      const caller = new AbortController();
      const abandoned = one.evaluate({ formId: "f-quick", workspaceId: "w-b", document: quickDoc, answers, signal: caller.signal });
      caller.abort();
      await assert.rejects(abandoned, { name: "AbortError" });
      // Its place is free: the next one of the workspace waits instead of being shed as busy.
      const busyBefore = await timeouts("busy");
      const next = one.evaluate({ formId: "f-quick", workspaceId: "w-b", document: quickDoc, answers });
      assert.equal(await timeouts("busy"), busyBefore);
      assert.deepEqual(valuesOf(await next), { "calculated:quick": 5 });
      await running;
    } finally {
      await one.close();
    }
  });

  it("starts failing workers again with backoff, stores null at once after several failures in a row, and recovers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "calculated-fields-worker-"));
    const loads = join(dir, "loads");
    writeFileSync(loads, "");
    // A worker module that fails to load, and notes each attempt.
    const module = join(dir, "worker.mjs");
    writeFileSync(module, `import { appendFileSync } from "node:fs"; appendFileSync(${JSON.stringify(loads)}, "x"); throw new Error("cannot load");`);
    const { errors, logger } = recordingLogger();
    const failing = createCalculatedFieldsPool({ size: 1, deadlineMs: 2_000, maxStartFailures: 3, restartDelayMs: 20, logger, workerUrl: pathToFileURL(module) });
    try {
      const before = await timeouts("unavailable");
      // Waits through the first failures, then stores null when the third gives up.
      assert.deepEqual(valuesOf(await failing.evaluate({ formId: "f1", workspaceId: "w1", document: quickDoc, answers })), { "calculated:quick": null });
      assert.equal(await timeouts("unavailable"), before + 1);
      assert.equal(readFileSync(loads, "utf8").length, 3);
      // From now on at once, without a worker.
      assert.deepEqual(valuesOf(await failing.evaluate({ formId: "f1", workspaceId: "w1", document: quickDoc, answers })), { "calculated:quick": null });
      assert.equal(await timeouts("unavailable"), before + 2);

      // Retried with a doubling pause (80, 160, 320 ms...), not in a loop.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const attempts = readFileSync(loads, "utf8").length;
      assert.ok(attempts >= 4 && attempts <= 6, `${attempts} starts`);
      const gaveUp = "calculated fields workers keep failing to start: storing null until one starts";
      assert.deepEqual(errors.filter((m) => m === gaveUp), [gaveUp], "giving up is logged once");
      assert.equal(errors.length, 4, "each failure before giving up, then nothing more");

      // The module loads again: the next start succeeds and evaluations work.
      writeFileSync(module, `import ${JSON.stringify(new URL("./calculated-fields-worker.ts", import.meta.url).href)};`);
      let values: Record<string, unknown>;
      do {
        await new Promise((resolve) => setTimeout(resolve, 50));
        values = valuesOf(await failing.evaluate({ formId: "f1", workspaceId: "w1", document: quickDoc, answers }));
      } while (values["calculated:quick"] === null);
      assert.deepEqual(values, { "calculated:quick": 5 });
    } finally {
      await failing.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
