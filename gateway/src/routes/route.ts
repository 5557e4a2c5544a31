// One resource route, written once for the two doors that may serve it: /api/v1 (an API key) and
// /app/api (the app's session). An entry states its method, path, schemas, status, handler and answer;
// `api` (its reference entry) and `app` say which doors serve it, and what a door does differently:
// another path or schema, the handler's input built from it (`input`), another answer (`answer`).
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Request, Response } from "express";
import { z } from "zod";
import { describeZodError, fieldViolationsOf, recordIdPattern } from "@formsvc/form-document";
import { asCaller } from "@formsvc/platform/caller.ts";
import { HttpError } from "../http-errors.ts";
import { pathIdMessages, rejectMalformedPathIds, rejectUnsafeQueryAndBody } from "../input-safety.ts";

type Method = "get" | "post" | "put" | "patch" | "delete";
type AnyObject = z.ZodObject<any>;
/** The parsed value of a schema; a part not read (no schema, or `noQuery`) is empty. */
type Part<T> = T extends z.ZodType ? (z.output<T> extends Record<string, never> ? {} : z.output<T>) : {};
/** A door's own schema where it states one, else the route's. */
type DoorPart<Own, Route> = [Own] extends [undefined] ? Part<Route> : Part<Own>;

/** What a handler and an answer are given: the request's parts, and who the request acts for. */
interface RouteInput<P = {}, Q = {}, B = {}> {
  params: P;
  query: Q;
  body: B;
  /** The key's owner (/api/v1) or the signed-in person (/app/api). */
  userId: string;
  /** The API key of the request (/api/v1); empty at /app/api. */
  apiKeyId: string;
  /** Call options that make a service call on their behalf. */
  asUser: ReturnType<typeof asCaller>;
}

/** What the reference says of a route of /api/v1 (its path, schemas and status are the route's). */
interface ApiDocs {
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /**
   * Error statuses this endpoint can answer beyond the ones its inputs imply (400; 413 and 415 with a body;
   * 404 with path parameters) and the ones every endpoint can (401, 429, 500, 503): the reference lists them all.
   */
  errors: number[];
}

/** What a door may do differently from the route (whose schemas are RP, RQ, RB); each field left out is the route's. */
interface DoorSide<R, In, P, Q, B, RP, RQ, RB> {
  method?: Method;
  path?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** The handler's input from what this door parsed (merged over it), where the door's request is shaped otherwise. */
  input?: (parsed: DoorInput<P, Q, B, RP, RQ, RB>) => { [K in "params" | "query" | "body"]?: Partial<In[K & keyof In]> };
  /** This door's answer from the handler's result and what the door parsed. */
  answer?: (result: R, input: DoorInput<P, Q, B, RP, RQ, RB>) => unknown;
}

/** The request as one door parsed it: by its own schemas, or the route's. */
type DoorInput<P, Q, B, RP, RQ, RB> = RouteInput<DoorPart<P, RP>, DoorPart<Q, RQ>, DoorPart<B, RB>>;

interface RouteDefinition<R, P, Q, B, AP, AQ, AB, XP, XQ, XB> {
  method: Method;
  /** Express-style path, e.g. `/forms/:id`, under the door's prefix. */
  path: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * Success status and schema (204: no body); the description is the reference's. `also`: another success
   * status the handler may answer (as a Reply) with the same schema.
   */
  success: { status: 200 | 201 | 202 | 204; description?: string; schema?: z.ZodType; also?: { status: 200 | 201; description: string } };
  handle(input: HandlerInput<P, Q, B, AP, AQ, AB, XP, XQ, XB>): Promise<R>;
  /** The answer from the handler's result, at a door that states none; without it, the result itself. */
  answer?: (result: R, input: HandlerInput<P, Q, B, AP, AQ, AB, XP, XQ, XB>) => unknown;
  /** Served at /api/v1, with its reference entry. */
  api?: ApiDocs & DoorSide<R, HandlerInput<P, Q, B, AP, AQ, AB, XP, XQ, XB>, AP, AQ, AB, P, Q, B>;
  /** Served at /app/api. */
  app?: DoorSide<R, HandlerInput<P, Q, B, AP, AQ, AB, XP, XQ, XB>, XP, XQ, XB, P, Q, B>;
}

/** The handler's view: the route's parts, and what one door's own schemas may add (absent at the other). */
type HandlerInput<P, Q, B, AP, AQ, AB, XP, XQ, XB> = RouteInput<
  Part<P> & Partial<Part<AP>> & Partial<Part<XP>>,
  Part<Q> & Partial<Part<AQ>> & Partial<Part<XQ>>,
  Part<B> & Partial<Part<AB>> & Partial<Part<XB>>
>;

/** An entry of the table, as stored: the types of its parts are its own business. */
export type Route = RouteDefinition<any, any, any, any, any, any, any, any, any, any>;

/** Keeps each entry's handler typed by its own schemas. */
export function defineRoute<
  R,
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  AP extends AnyObject | undefined = undefined,
  AQ extends AnyObject | undefined = undefined,
  AB extends z.ZodType | undefined = undefined,
  XP extends AnyObject | undefined = undefined,
  XQ extends AnyObject | undefined = undefined,
  XB extends z.ZodType | undefined = undefined,
>(route: RouteDefinition<R, P, Q, B, AP, AQ, AB, XP, XQ, XB>): Route {
  return route;
}

/** An answer other than the route's status and JSON: another status, headers, or text (a download). */
export class Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  constructor(status: number, body: unknown, headers: Record<string, string> = {}) {
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** A route as one door serves it: method, path and schemas there, and how it answers. */
export interface ServedRoute {
  /** The entry's own `<method> <path>`, the same at both doors (the audit log's route→action table is keyed by it). */
  key: string;
  method: Method;
  path: string;
  params?: AnyObject;
  query?: AnyObject;
  body?: z.ZodType;
  success: Route["success"];
  /**
   * Checks and parses a request the door has let through, made for `userId` with `apiKeyId` (throwing its 4xx): its parts
   * as parsed, the handler's input made of them, and the answer, which runs the handler.
   */
  accept(
    req: Request,
    userId: string,
    apiKeyId?: string,
  ): { parts: unknown[]; input: { params: unknown; query: unknown; body: unknown; userId: string }; answer(): Promise<Reply> };
}

/** A route of /api/v1: served, and described in the reference. */
export type ApiRoute = ServedRoute & ApiDocs;

/** `value` checked against `schema` (none: undefined); a mismatch is a 400 naming the field under `where`. */
export function parse<T extends z.ZodType>(schema: T | undefined, value: unknown, where: string): z.output<T> {
  if (!schema) return undefined as z.output<T>;
  const result = schema.safeParse(value);
  if (!result.success) {
    // Problems marked as field violations (a theme's colours, ...) are listed by their path in the part too.
    const fields = fieldViolationsOf(result.error).map(({ path, message }) => ({ key: path, message }));
    throw new HttpError(400, describeZodError(result.error, where), {}, fields);
  }
  return result.data;
}

function hasBody(req: Request): boolean {
  return Number(req.get("content-length") ?? 0) > 0 || req.get("transfer-encoding") !== undefined;
}

/** `route` as `door` serves it, or undefined when that door does not. */
export function servedAt(route: Route, door: "api"): ApiRoute | undefined;
export function servedAt(route: Route, door: "app"): ServedRoute | undefined;
export function servedAt(route: Route, door: "api" | "app"): ServedRoute | undefined {
  const side = route[door];
  if (!side) return undefined;
  const { method = route.method, path = route.path, params = route.params, query = route.query, body = route.body } = side;
  const pathIds = pathIdMessages(path);
  const answer = side.answer ?? route.answer ?? ((result: unknown) => result);
  const api = route.api;
  const docs = door === "api" && api ? { operationId: api.operationId, tag: api.tag, summary: api.summary, description: api.description, errors: api.errors } : {};
  return {
    key: `${route.method} ${route.path}`,
    method,
    path,
    ...docs,
    params,
    query,
    body,
    success: route.success,
    accept(req, userId, apiKeyId = "") {
      rejectMalformedPathIds(req.params, pathIds);
      if (body && hasBody(req) && !req.is("application/json")) throw new HttpError(415, "Content-Type must be application/json");
      rejectUnsafeQueryAndBody(req);
      const parsed: RouteInput<any, any, any> = {
        params: parse(params, req.params, "path"),
        query: parse(query, req.query ?? {}, "query"),
        body: body ? parse(body, req.body ?? {}, "body") : undefined,
        userId,
        apiKeyId,
        asUser: asCaller(userId),
      };
      const adapted = side.input?.(parsed) ?? {};
      const input = {
        ...parsed,
        params: { ...parsed.params, ...adapted.params },
        query: { ...parsed.query, ...adapted.query },
        body: adapted.body ? { ...parsed.body, ...adapted.body } : parsed.body,
      };
      return {
        parts: [parsed.params, parsed.query, parsed.body],
        input,
        async answer() {
          const result = await answer(await route.handle(input), input);
          return result instanceof Reply ? result : new Reply(route.success.status, result ?? null);
        },
      };
    },
  };
}

/**
 * Sends an answer: nothing for a 204, text as it is (its Content-Type among the headers), text or bytes in
 * chunks as they come (an async iterable, sent with back-pressure; a failure midway cuts the response short),
 * anything else as JSON.
 */
export function send(res: Response, reply: { status: number; body: unknown; headers?: Record<string, string> }): void {
  res.set(reply.headers ?? {});
  if (reply.status === 204) res.status(204).end();
  else if (isChunks(reply.body)) {
    res.status(reply.status);
    pipeline(Readable.from(reply.body), res).catch(() => res.destroy());
  }
  else if (typeof reply.body === "string") res.status(reply.status).send(reply.body);
  else res.status(reply.status).json(reply.body);
}

function isChunks(body: unknown): body is AsyncIterable<string | Buffer> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

/** The query of a door that reads none where the route reads one. */
export const noQuery = z.object({});

export const idParamsSchema = z.object({ id: z.string().min(1).describe("Identifier") });

/** An id in a query or body: a malformed one is a 400 naming the field (in a path, the record's 404). */
export const recordIdSchema = z.string().regex(recordIdPattern, "must be an id: 1 to 64 letters, digits, '_' or '-'");
