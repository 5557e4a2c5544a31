// The edge's side of the one input rule (`@formsvc/form-document`'s input-safety): path ids, query
// values and JSON bodies are checked here, before any schema, service or database sees them.
import type { Request, RequestHandler } from "express";
import { isRecordId, jsonInputProblem, maxBodyDepth } from "@formsvc/form-document";
import { HttpError } from "./http-errors.ts";

/**
 * What the service owning each collection calls a record it cannot find: a malformed id in a path
 * answers exactly what a well-formed unknown one does ("form not found"), so it tells a caller nothing more.
 */
const recordNames: Record<string, string> = {
  forms: "form",
  submissions: "submission",
  webhooks: "webhook",
  deliveries: "delivery",
  workspaces: "workspace",
  members: "member",
  invites: "invitation",
  invitations: "invitation",
  "api-keys": "API key",
  links: "link",
};

/**
 * The not-found message of each `:param` of an Express path, from the collection segment before it
 * (`/forms/:id/submissions/:sid`: id is a form, sid a submission). Throws for a parameter that follows
 * no known collection, so a new route cannot go without one.
 */
export function pathIdMessages(path: string): Map<string, string> {
  const messages = new Map<string, string>();
  const segments = path.split("/");
  segments.forEach((segment, i) => {
    if (!segment.startsWith(":")) return;
    const record = recordNames[segments[i - 1] ?? ""];
    if (!record) throw new Error(`${path}: no record is known for ${segment}`);
    messages.set(segment.slice(1), `${record} not found`);
  });
  return messages;
}

/** Throws the 404 of the first malformed id of `params`, in path order. */
export function rejectMalformedPathIds(params: Record<string, unknown>, messages: Map<string, string>): void {
  for (const [name, message] of messages) if (!isRecordId(params[name])) throw new HttpError(404, message);
}

/** The id parameter `name` of the matched route, or the route's 404 for its record when malformed. */
export function pathId(req: Request, name: string): string {
  const value = req.params[name];
  if (isRecordId(value)) return value;
  const routePath = typeof req.route?.path === "string" ? req.route.path : "";
  throw new HttpError(404, pathIdMessages(routePath).get(name) ?? "not found");
}

/** Throws a 400 naming the first query value or body string that cannot be stored, or a body nested too deep. */
export function rejectUnsafeQueryAndBody(req: Request): void {
  const problem = jsonInputProblem(req.query, "query", maxBodyDepth) ?? jsonInputProblem(req.body, "body", maxBodyDepth);
  if (problem) throw new HttpError(400, problem);
}

/** `rejectUnsafeQueryAndBody` as middleware, after the body parser. */
export const unsafeInputGuard: RequestHandler = (req, _res, next) => {
  rejectUnsafeQueryAndBody(req);
  next();
};
