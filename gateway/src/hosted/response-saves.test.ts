import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { BadRequestSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";
import { runWithRequestId } from "@formsvc/platform/request-context.ts";
import { rpcErrorOf } from "@formsvc/platform/rpc-error-items.ts";
import { SubmissionsService, type SaveResponseRequest, type SaveResponsesRequest } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { responseSaver } from "./response-saves.ts";

/** Submissions as the saver sees it (unit level): it saves a form "ok", refuses "bad" with a field violation and "closed" as closed. */
function fakeSubmissions(options: { failBatches?: boolean } = {}) {
  const alone: SaveResponseRequest[] = [];
  const batches: SaveResponsesRequest[] = [];
  const outcome = (formId: string) => {
    if (formId === "bad") {
      return new ConnectError("answers.email: must be an email address", Code.InvalidArgument, undefined, [
        { desc: BadRequestSchema, value: { fieldViolations: [{ field: "email", description: "must be an email address" }] } },
      ]);
    }
    if (formId === "closed") return new ConnectError("this form is closed", Code.FailedPrecondition);
    return { responseId: `r-${formId}`, completed: true };
  };
  const transport = createRouterTransport((router) =>
    router.service(SubmissionsService, {
      saveResponse(req) {
        alone.push(req);
        const out = outcome(req.formId);
        if (out instanceof ConnectError) throw out;
        return out;
      },
      async *saveResponses(req) {
        batches.push(req);
        if (options.failBatches) throw new ConnectError("the database is unavailable", Code.Unavailable);
        // Answered last first: each save is matched by its index, not by its order.
        for (let index = req.items.length - 1; index >= 0; index--) {
          const out = outcome(req.items[index].save!.formId);
          yield out instanceof ConnectError ? { index, outcome: { case: "error", value: rpcErrorOf(out) } } : { index, outcome: { case: "saved", value: out } };
        }
      },
    }),
  );
  return { client: createClient(SubmissionsService, transport), alone, batches };
}

describe("responseSaver", () => {
  it("sends the saves of one turn in one SaveResponses call, each with its request id, and answers each with its own result", async () => {
    const submissions = fakeSubmissions();
    const save = responseSaver(submissions.client);
    const [ok, bad, closed] = await Promise.allSettled(
      ["ok", "bad", "closed"].map((formId) => runWithRequestId(`req-${formId}`, () => save({ formId, completed: true }))),
    );
    assert.equal(submissions.alone.length, 0);
    assert.equal(submissions.batches.length, 1);
    assert.deepEqual(
      submissions.batches[0].items.map((item) => [item.save?.formId, item.requestId]),
      [
        ["ok", "req-ok"],
        ["bad", "req-bad"],
        ["closed", "req-closed"],
      ],
    );
    assert.deepEqual(ok.status === "fulfilled" && [ok.value.responseId, ok.value.completed], ["r-ok", true]);
    assert.ok(bad.status === "rejected" && closed.status === "rejected");
    const invalid = ConnectError.from(bad.reason);
    assert.equal(invalid.code, Code.InvalidArgument);
    assert.deepEqual(invalid.findDetails(BadRequestSchema), [create(BadRequestSchema, { fieldViolations: [{ field: "email", description: "must be an email address" }] })]);
    assert.deepEqual([ConnectError.from(closed.reason).code, ConnectError.from(closed.reason).rawMessage], [Code.FailedPrecondition, "this form is closed"]);
  });

  it("sends a save that comes alone as a SaveResponse of its own", async () => {
    const submissions = fakeSubmissions();
    const saved = await responseSaver(submissions.client)({ formId: "ok" });
    assert.equal(saved.responseId, "r-ok");
    assert.deepEqual([submissions.alone.map((r) => r.formId), submissions.batches.length], [["ok"], 0]);
  });

  it("fails every save of a call that fails, with the call's error", async () => {
    const submissions = fakeSubmissions({ failBatches: true });
    const save = responseSaver(submissions.client);
    const results = await Promise.allSettled([save({ formId: "ok" }), save({ formId: "ok" })]);
    for (const result of results) {
      assert.equal(result.status, "rejected");
      assert.equal(ConnectError.from(result.reason).code, Code.Unavailable);
    }
  });
});
