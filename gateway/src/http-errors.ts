import { Code, ConnectError } from "@connectrpc/connect";
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "@formsvc/platform/logger.ts";

/** The one table from RPC codes to HTTP statuses (google.rpc's mapping). */
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
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 504,
};

/** An error answered with its own status and message. */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

const unavailableMessage = "service temporarily unavailable, try again shortly";
const internalMessage = "internal server error";

/** Status and message an error is answered with; a 500 says nothing more. */
export function errorAnswer(err: unknown): { status: number; message: string; headers?: Record<string, string> } {
  if (err instanceof HttpError) return { status: err.status, message: err.message, headers: err.headers };
  const bodyParserError = err as { type?: string; status?: number; message?: string };
  if (bodyParserError?.type === "entity.parse.failed") return { status: 400, message: "request body is not valid JSON" };
  if (bodyParserError?.type === "entity.too.large") return { status: 413, message: "request body is too large" };
  if (bodyParserError?.type === "encoding.unsupported" || bodyParserError?.type === "charset.unsupported") {
    return { status: 415, message: "unsupported body encoding" };
  }
  if (err instanceof ConnectError) {
    const status = httpStatusOfCode[err.code];
    if (status === 503) return { status, message: unavailableMessage };
    if (status !== undefined && status < 500) return { status, message: err.rawMessage };
  }
  return { status: 500, message: internalMessage };
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const answer = errorAnswer(err);
    if (answer.status >= 500) logger.error({ err, method: req.method, path: req.path, requestId: res.locals.requestId }, "request failed");
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
    res.status(answer.status).json({ error: answer.message });
  };
}

export const jsonNotFound: RequestHandler = (_req, res) => {
  res.status(404).json({ error: "not found" });
};
