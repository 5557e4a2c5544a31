import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FormDocument } from "@formsvc/form-document";
import { manyOptions, slowExpression } from "@formsvc/form-document/testing/slow-calculated-field";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import type { StoredAnswers } from "./answers/stored-answer.ts";
import { everyField, problemsOf, recordCutOff } from "./calculated-field-problems.ts";
import { createCalculatedFieldsPool, type CutOff } from "./calculated-fields-pool.ts";
import { entities } from "./entities/index.ts";
import { migrations } from "./migrations/index.ts";

let database: TestDatabase;
let orm: MikroORM;
before(async () => {
  database = await createTestDatabase("calculated_field_problems_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "submissions", entities, migrations });
});
after(async () => {
  await orm?.close();
  await database?.drop();
});

const eventually = async <T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> => {
  for (const end = Date.now() + 10_000; ; ) {
    const value = await read();
    if (ok(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe("calculated field problems", () => {
  it("counts each cut-off per form, field and reason, most recent first", async () => {
    const record = recordCutOff(orm, undefined);
    record({ formId: "f1", field: "score", reason: "deadline" });
    record({ formId: "f1", field: "score", reason: "deadline" });
    record({ formId: "f1", reason: "busy" });
    record({ formId: "f2", field: "other", reason: "deadline" });
    const problems = await eventually(() => problemsOf(orm, "f1"), (p) => p.reduce((n, x) => n + x.count, 0) === 3);
    assert.deepEqual(
      problems.map((p) => [p.field, p.reason, p.count]).sort(),
      [
        [everyField, "busy", 1],
        ["score", "deadline", 2],
      ],
    );
    assert.ok(problems.every((p) => p.lastAt instanceof Date));
    assert.deepEqual(await problemsOf(orm, "f-none"), []);
  });

  it("is told by the pool of a field cut off at its deadline, by name", async () => {
    const document: FormDocument = {
      blocks: [{ id: "b2", key: "tags", type: "CHECKBOXES", question: "Tags", options: manyOptions }],
      calculatedFields: [{ name: "slow", type: "NUMBER", expression: slowExpression }],
    };
    const answers: StoredAnswers = { tags: { questionId: "b2", type: "CHECKBOXES", label: "Tags", value: manyOptions.map((o) => o.id) } };
    const told: CutOff[] = [];
    const record = recordCutOff(orm, undefined);
    const pool = createCalculatedFieldsPool({ size: 1, deadlineMs: 100, onCutOff: (c) => (told.push(c), record(c)) });
    try {
      const result = await pool.evaluate({ formId: "f-slow", workspaceId: "w", document, answers });
      assert.equal(result["calculated:slow"].value, null);
    } finally {
      await pool.close();
    }
    assert.deepEqual(told, [{ formId: "f-slow", field: "slow", reason: "deadline" }]);
    const [problem] = await eventually(() => problemsOf(orm, "f-slow"), (p) => p.length === 1);
    assert.deepEqual([problem.field, problem.reason, problem.count], ["slow", "deadline", 1]);
  });
});
