// POST /f/:formId/insights: the beacons of the page's insights script (insights-beacon.js), sent with
// navigator.sendBeacon (a text/plain body of JSON, no preflight). Answered 204 whether counted or not: a
// robot's or a prefetch's beacon counts nothing, and keys the form does not have are left out.
import { join } from "node:path";
import express, { type Request, type RequestHandler } from "express";
import { z } from "zod";
import { describeZodError, isInputBlock, type FormDocument } from "@formsvc/form-document";
import { HttpError } from "../http-errors.ts";
import { isPersonVisit, type InsightsRecorder } from "./insights.ts";

/** The browser script, served before form-page.js in the page's one script. */
export const insightsScriptFile = join(import.meta.dirname, "insights-beacon.js");

const questionKeys = z.array(z.string().min(1).max(200)).max(500).default([]);
/** A beacon: `start` once per page load, then `complete` or `leave` once with the questions of the visit. */
const beaconSchema = z.discriminatedUnion("event", [
  z.strictObject({ event: z.literal("start") }),
  z.strictObject({ event: z.literal("leave"), shown: questionKeys, answered: questionKeys }),
  z.strictObject({ event: z.literal("complete"), shown: questionKeys, answered: questionKeys, seconds: z.number().min(0).max(365 * 86_400) }),
]);

export function insightsBeaconRoute(insights: InsightsRecorder, documentOf: (req: Request) => Promise<FormDocument>): RequestHandler[] {
  const receive: RequestHandler = async (req, res) => {
    let json: unknown;
    try {
      json = JSON.parse(typeof req.body === "string" ? req.body : "");
    } catch {
      throw new HttpError(400, "body: must be JSON");
    }
    const parsed = beaconSchema.safeParse(json);
    if (!parsed.success) throw new HttpError(400, describeZodError(parsed.error, "body"));
    // The form must be published (404 otherwise); only its questions are counted.
    const document = await documentOf(req);
    const formId = String(req.params.formId);
    const beacon = parsed.data;
    if (isPersonVisit(req)) {
      if (beacon.event === "start") insights.start(formId);
      else {
        const keys = new Set(document.blocks.filter(isInputBlock).map((b) => b.key));
        const known = (list: string[]) => [...new Set(list)].filter((key) => keys.has(key));
        const visit = { shown: known(beacon.shown), answered: known(beacon.answered) };
        insights.visit(formId, visit, beacon.event === "leave" ? "left" : { completedInSeconds: beacon.seconds });
      }
    }
    res.status(204).end();
  };
  return [express.text({ type: () => true, limit: "32kb" }), receive];
}
