import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Request } from "express";
import { createLogger } from "@formsvc/platform/logger.ts";
import type { RecordInsightsRequest } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { InsightsCounter, isPersonVisit } from "./insights.ts";

const chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const request = (headers: Record<string, string>, ip = "203.0.113.7") => ({ ip, get: (name: string) => headers[name.toLowerCase()] }) as unknown as Request;

/** A counter whose sends land in `sent`; `failing` makes the next sends fail. */
function counter() {
  const sent: Partial<RecordInsightsRequest>[] = [];
  const state = { failing: false, saltAsks: 0 };
  const insights = new InsightsCounter({
    logger: createLogger("insights-test", "silent"),
    sendMs: 60_000,
    now: () => new Date("2026-05-01T10:00:00Z"),
    submissions: {
      recordInsights: async (req) => {
        if (state.failing) throw new Error("submissions is down");
        sent.push(req as Partial<RecordInsightsRequest>);
        return {} as never;
      },
      getVisitorSalt: async () => {
        state.saltAsks++;
        return { salt: new Uint8Array(32).fill(7) } as never;
      },
    },
  });
  return { insights, sent, state };
}

describe("insights counting", () => {
  it("tells a person's browser from robots and prefetches", () => {
    assert.equal(isPersonVisit(request({ "user-agent": chrome })), true);
    for (const agent of ["", "Googlebot/2.1 (+http://www.google.com/bot.html)", "curl/8.5.0", "Mozilla/5.0 HeadlessChrome/131.0", "facebookexternalhit/1.1", "node"]) {
      assert.equal(isPersonVisit(request({ "user-agent": agent })), false, agent);
    }
    assert.equal(isPersonVisit(request({ "user-agent": chrome, "sec-purpose": "prefetch" })), false);
    assert.equal(isPersonVisit(request({ "user-agent": chrome, "sec-purpose": "prefetch;prerender" })), false);
    assert.equal(isPersonVisit(request({ "user-agent": chrome, purpose: "prefetch" })), false);
  });

  it("sends the sums of a day in one batch, each visitor once and never by address", async () => {
    const { insights, sent } = counter();
    insights.view(request({ "user-agent": chrome }), "f1");
    insights.view(request({ "user-agent": chrome }), "f1");
    insights.view(request({ "user-agent": chrome }, "198.51.100.1"), "f1");
    insights.start("f1");
    insights.completion("f1");
    insights.visit("f1", { shown: ["a", "b", "c"], answered: ["a", "b", "c"] }, { completedInSeconds: 42 });
    insights.start("f1");
    // Left at b: shown a, b and c (one page), answered a and c.
    insights.visit("f1", { shown: ["a", "b", "c"], answered: ["a", "c"] }, "left");
    insights.start("f1");
    // Left after answering all it was shown: stopped at the last.
    insights.visit("f1", { shown: ["a"], answered: ["a"] }, "left");
    await insights.send();

    assert.equal(sent.length, 1);
    const [batch] = sent;
    assert.deepEqual(batch.days?.map((d) => [d.formId, d.day, d.views, d.starts, d.completions]), [["f1", "2026-05-01", 3n, 3n, 1n]]);
    assert.equal(batch.visitors?.length, 2, "two addresses, one of them twice");
    assert.ok(batch.visitors?.every((v) => !v.visitor.includes("203.0.113") && v.visitor.length === 32));
    const q = Object.fromEntries(batch.questions!.map((x) => [x.key, [Number(x.shown), Number(x.answered), Number(x.dropOffs)]]));
    assert.deepEqual(q, { a: [3, 3, 1], b: [2, 1, 1], c: [2, 2, 0] });
    assert.deepEqual(batch.completionTimes?.map((t) => [t.seconds, t.count]), [[42n, 1n]]);

    await insights.send();
    assert.equal(sent.length, 1, "nothing more to send");
  });

  it("keeps what a failed send held and sends it with what came after", async () => {
    const { insights, sent, state } = counter();
    insights.view(request({ "user-agent": chrome }), "f2");
    state.failing = true;
    await insights.send();
    state.failing = false;
    insights.view(request({ "user-agent": chrome }), "f2");
    await insights.stop();
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0].days?.map((d) => d.views), [2n]);
    assert.equal(sent[0].visitors?.length, 1);
    assert.equal(state.saltAsks, 1, "the day's salt asked once");
  });
});
