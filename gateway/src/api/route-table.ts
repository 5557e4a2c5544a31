import express, { type Router } from "express";
import { z } from "zod";
import { describeZodError } from "@formsvc/form-document";
import { HttpError } from "../http-errors.ts";
import { idempotencyKeyOf, type IdempotentRequests } from "../idempotency.ts";
import { pathIdMessages, rejectMalformedPathIds, rejectUnsafeQueryAndBody } from "../input-safety.ts";
import type { Caller } from "./authenticate.ts";

type Method = "get" | "post" | "patch" | "delete";
type AnyObject = z.ZodObject<any>;

/**
 * One REST endpoint: its validation schemas, what it answers, and the handler. The same table
 * mounts the routes and generates the OpenAPI document, so the reference cannot drift.
 */
export interface ApiRoute<P extends AnyObject = AnyObject, Q extends AnyObject = AnyObject, B extends z.ZodType = z.ZodType> {
  method: Method;
  /** Express-style path under /api/v1, e.g. `/forms/:id`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Success status and schema; 204 has no body. */
  success: { status: 200 | 201 | 204; description: string; schema?: z.ZodType };
  /**
   * Error statuses this endpoint can answer beyond the ones its inputs imply (400; 413 and 415 with a body;
   * 404 with path parameters) and the ones every endpoint can (401, 429, 500, 503): the reference lists them all.
   */
  errors: number[];
  handle(input: { params: z.output<P>; query: z.output<Q>; body: z.output<B>; caller: Caller }): Promise<unknown>;
}

/** Keeps each route's handler typed by its own schemas. */
export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  route: ApiRoute<P, Q, B>,
): ApiRoute {
  return route as unknown as ApiRoute;
}

/** `value` checked against `schema` (none: undefined); a mismatch is a 400 naming the field under `where`. */
export function parse<T extends z.ZodType>(schema: T | undefined, value: unknown, where: string): z.output<T> {
  if (!schema) return undefined as z.output<T>;
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError(400, describeZodError(result.error, where));
  return result.data;
}

function hasBody(req: express.Request): boolean {
  return Number(req.get("content-length") ?? 0) > 0 || req.get("transfer-encoding") !== undefined;
}

/** Every POST takes an `Idempotency-Key`: the creates and actions an integrator may need to retry. */
export function takesIdempotencyKey(route: Pick<ApiRoute, "method">): boolean {
  return route.method === "post";
}

/**
 * Mounts every route on `router`, behind `before` (authentication, per-key limits). A POST with an
 * `Idempotency-Key` runs once per key and API key (`idempotency`); its repeats answer what it answered.
 */
export function mountRoutes(router: Router, routes: ApiRoute[], before: express.RequestHandler[], idempotency: IdempotentRequests): void {
  for (const route of routes) {
    const pathIds = pathIdMessages(route.path);
    router[route.method](route.path, ...before, async (req, res) => {
      rejectMalformedPathIds(req.params, pathIds);
      if (route.body && hasBody(req) && !req.is("application/json")) throw new HttpError(415, "Content-Type must be application/json");
      rejectUnsafeQueryAndBody(req);
      const caller = res.locals.caller as Caller;
      const input = {
        params: parse(route.params, req.params, "path"),
        query: parse(route.query, req.query, "query"),
        body: route.body ? parse(route.body, req.body ?? {}, "body") : undefined,
        caller,
      };
      const run = async () => ({ status: route.success.status, body: (await route.handle(input)) ?? null });
      const key = takesIdempotencyKey(route) ? idempotencyKeyOf(req) : "";
      const answer = key
        ? await idempotency.run({ scope: `key:${caller.apiKeyId}`, key, content: [route.operationId, input.params, input.query, input.body] }, run)
        : { ...(await run()), replayed: false };
      if (answer.replayed) res.setHeader("Idempotent-Replayed", "true");
      if (answer.status === 204) res.status(204).end();
      else res.status(answer.status).json(answer.body);
    });
  }
}
