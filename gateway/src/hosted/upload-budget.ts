// How much one client address may upload to hosted forms: at most `uploads` files and `bytes` bytes in
// a sliding 10 minutes (UPLOAD_RATE_PER_IP, UPLOAD_BYTES_PER_IP), past which POST /f/:id/uploads answers
// 429 with Retry-After. Files are counted when asked for; bytes when received, as many as actually
// came (Content-Length is only a hint, and multer cuts a body longer than it says): a file that no
// longer fits the budget is refused and not stored. A declared length that cannot fit is refused before
// its body is read.
import type { Request, RequestHandler } from "express";
import { HttpError } from "../http-errors.ts";
import type { RateDecision, RateLimitStore } from "../rate-limit/sliding-window.ts";

const uploadBudgetWindowMs = 10 * 60_000;
/** What a multipart body may carry beside its file: boundaries, part headers, the few small fields. */
const multipartOverheadBytes = 16 * 1024;

export interface UploadBudget {
  store: RateLimitStore;
  /** Uploads per address in the window. */
  uploads: number;
  /** Bytes of files per address in the window. */
  bytes: number;
  addressOf: (req: Request) => string;
}

function refused(what: string, decision: RateDecision): HttpError {
  const retryAfter = String(Math.max(1, Math.ceil(decision.resetMs / 1000)));
  return new HttpError(429, `upload limit of ${what} per address in ${uploadBudgetWindowMs / 60_000} minutes exceeded`, { "Retry-After": retryAfter });
}

/**
 * `admit` goes before the body is read (counts the upload, checks the declared length against what is
 * left), `charge` after it, before the file is kept (counts the bytes received, throwing the 429 when they
 * no longer fit).
 */
export function uploadBudget({ store, uploads, bytes, addressOf }: UploadBudget): { admit: RequestHandler; charge: (req: Request, received: number) => Promise<void> } {
  const countKey = (req: Request) => `uploads:${addressOf(req)}`;
  const bytesKey = (req: Request) => `upload-bytes:${addressOf(req)}`;
  const bytesShown = `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

  const admit: RequestHandler = async (req, _res, next) => {
    const counted = await store.hit(countKey(req), uploads, uploadBudgetWindowMs);
    if (!counted.allowed) return next(refused(`${uploads} files`, counted));
    const left = await store.hit(bytesKey(req), bytes, uploadBudgetWindowMs, 0);
    const declared = Number(req.get("content-length"));
    const fileAtLeast = Number.isFinite(declared) ? declared - multipartOverheadBytes : 0;
    if (left.remaining === 0 || fileAtLeast > left.remaining) {
      // Refused as if the declared file had been asked for: Retry-After says when that would fit.
      return next(refused(bytesShown, await store.hit(bytesKey(req), bytes, uploadBudgetWindowMs, Math.max(1, fileAtLeast))));
    }
    next();
  };

  const charge = async (req: Request, received: number): Promise<void> => {
    if (received === 0) return;
    const decision = await store.hit(bytesKey(req), bytes, uploadBudgetWindowMs, received);
    if (!decision.allowed) throw refused(bytesShown, decision);
  };

  return { admit, charge };
}
