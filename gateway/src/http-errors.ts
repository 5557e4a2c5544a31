import { STATUS_CODES } from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "@formsvc/platform/logger.ts";
import { isTransportFailure } from "@formsvc/platform/upstream-failure.ts";
import { BadRequestSchema, ErrorInfoSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";

/**
 * The one table from RPC codes to HTTP statuses (google.rpc's mapping). A call that got no answer
 * (UNAVAILABLE, DEADLINE_EXCEEDED, a reset) is a 503 by `isTransportFailure` before this table is read.
 */
export const httpStatusOfCode: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.OutOfRange]: 400,
  [Code.FailedPrecondition]: 409,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Canceled]: 499,
  [Code.Unimplemented]: 501,
};

/** An error answered with its own status and message. */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The request's fields that are wrong, answered as `fields` beside the message. */
  readonly fields: FieldProblem[];
  /** A machine-readable reason, answered as `code` beside the message (the response rules' refusals). */
  readonly code?: string;
  constructor(status: number, message: string, headers: Record<string, string> = {}, fields: FieldProblem[] = [], code?: string) {
    super(message);
    this.status = status;
    this.headers = headers;
    this.fields = fields;
    this.code = code;
  }
}

const unavailableMessage = "service temporarily unavailable, try again shortly";
const internalMessage = "internal server error";
/** Seconds a client is asked to wait after a 503: long enough for a restarted service to be back. */
export const retryAfterSeconds = 2;

/** Messages of body-parser's (and raw-body's) errors, by their `type`. */
const bodyErrorMessages: Record<string, string> = {
  "entity.parse.failed": "request body is not valid JSON",
  "entity.too.large": "request body is too large",
  "encoding.unsupported": "unsupported body encoding",
  "charset.unsupported": "unsupported body encoding",
  "parameters.too.many": "request body has too many fields",
  "request.size.invalid": "request body size does not match Content-Length",
  "request.aborted": "request aborted",
};

/** The 4xx status an Express, router or body-parser error carries (`status` or `statusCode`), if any. */
function clientErrorStatus(err: unknown): number | undefined {
  if (!err || typeof err !== "object") return undefined;
  const { status, statusCode } = err as { status?: unknown; statusCode?: unknown };
  const found = typeof status === "number" ? status : statusCode;
  return typeof found === "number" && Number.isInteger(found) && found >= 400 && found < 500 ? found : undefined;
}

/** What went wrong with the request, in words of our own (library messages may echo the input). */
function clientErrorMessage(err: object, status: number): string {
  const { type, code } = err as { type?: unknown; code?: unknown };
  if (typeof type === "string" && bodyErrorMessages[type]) return bodyErrorMessages[type];
  // The router's decodeURIComponent of a path parameter.
  if (err instanceof URIError) return "path is not valid percent-encoding";
  // zlib's errors: the body does not decode with its Content-Encoding.
  if (typeof code === "string" && code.startsWith("Z_")) return "request body cannot be decoded with its Content-Encoding";
  return (STATUS_CODES[status] ?? "bad request").toLowerCase();
}

/**
 * A problem with one field of the request, and what is wrong: an answer's key as filed in a submission, or
 * the path of a field violation in the request's body (`settings.theme.accentColor`).
 */
export interface FieldProblem {
  key: string;
  message: string;
}

/** The field violations of a service's error (google.rpc.BadRequest details), e.g. SaveResponse's invalid answers. */
export function fieldProblems(err: ConnectError): FieldProblem[] {
  return err.findDetails(BadRequestSchema).flatMap((detail) => detail.fieldViolations.map((v) => ({ key: v.field, message: v.description })));
}

/** A service error's machine-readable reason (google.rpc.ErrorInfo), e.g. a response rule's refusal code. */
export function errorCode(err: ConnectError): string | undefined {
  return err.findDetails(ErrorInfoSchema)[0]?.reason || undefined;
}

interface ErrorAnswer {
  status: number;
  message: string;
  /** The request's fields that are wrong, when the error names them. */
  fields?: FieldProblem[];
  headers?: Record<string, string>;
  /** The error's machine-readable reason, when it has one. */
  code?: string;
}

/** Status and message an error is answered with; a 500 says nothing more, a 503 asks to retry. */
export function errorAnswer(err: unknown): ErrorAnswer {
  const answer = statusAndMessage(err);
  if (answer.status === 503 && !answer.headers?.["Retry-After"]) answer.headers = { ...answer.headers, "Retry-After": String(retryAfterSeconds) };
  return answer;
}

function statusAndMessage(err: unknown): ErrorAnswer {
  if (err instanceof HttpError) {
    const answer: ErrorAnswer = { status: err.status, message: err.message, headers: err.headers, ...(err.code ? { code: err.code } : {}) };
    return err.fields.length > 0 ? { ...answer, fields: err.fields } : answer;
  }
  if (err instanceof ConnectError) {
    if (isTransportFailure(err)) return { status: 503, message: unavailableMessage };
    const status = httpStatusOfCode[err.code];
    if (status === undefined || status >= 500) return { status: 500, message: internalMessage };
    const fields = fieldProblems(err);
    const code = errorCode(err);
    const answer: ErrorAnswer = { status, message: err.rawMessage, ...(code ? { code } : {}) };
    return fields.length > 0 ? { ...answer, fields } : answer;
  }
  const status = clientErrorStatus(err);
  if (status !== undefined) return { status, message: clientErrorMessage(err as object, status) };
  return { status: 500, message: internalMessage };
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const answer = errorAnswer(err);
    if (answer.status >= 500) logger.error({ err, method: req.method, path: req.path, requestId: res.locals.requestId }, "request failed");
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
    res.status(answer.status).json({ error: answer.message, ...(answer.code ? { code: answer.code } : {}), ...(answer.fields ? { fields: answer.fields } : {}) });
  };
}

export const jsonNotFound: RequestHandler = (_req, res) => {
  res.status(404).json({ error: "not found" });
};
