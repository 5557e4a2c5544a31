import express, { type Router } from "express";
import { z } from "zod";
import { describeZodError } from "@formsvc/form-document";
import { HttpError } from "../http-errors.ts";
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
  /** Error statuses this endpoint can answer beyond the ones every endpoint can (401, 429, 500). */
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

/** Mounts every route on `router`, behind `before` (authentication, per-key limits). */
export function mountRoutes(router: Router, routes: ApiRoute[], before: express.RequestHandler[]): void {
  for (const route of routes) {
    router[route.method](route.path, ...before, async (req, res) => {
      let body: unknown;
      if (route.body) {
        if (hasBody(req) && !req.is("application/json")) throw new HttpError(415, "Content-Type must be application/json");
        body = parse(route.body, req.body ?? {}, "body");
      }
      const result = await route.handle({
        params: parse(route.params, req.params, "path"),
        query: parse(route.query, req.query, "query"),
        body,
        caller: res.locals.caller as Caller,
      });
      if (route.success.status === 204) res.status(204).end();
      else res.status(route.success.status).json(result);
    });
  }
}
