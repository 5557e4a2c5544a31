import { createHash } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { Request } from "express";
import { BeginIdempotencyResponse_Outcome as Outcome, type IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { sealer } from "@formsvc/platform/sealing.ts";
import { HttpError } from "./http-errors.ts";

/** `Idempotency-Key`: 1 to 255 visible ASCII characters (a UUID is usual); absent: empty. */
export function idempotencyKeyOf(req: Request): string {
  const key = req.get("idempotency-key");
  if (key === undefined) return "";
  if (!/^[\x21-\x7E]{1,255}$/.test(key)) throw new HttpError(400, "Idempotency-Key must be 1 to 255 visible ASCII characters");
  return key;
}

/** A request's answer as the client gets it, and again on a repeat. */
export interface Answer {
  status: number;
  body: unknown;
}

export interface IdempotentRequests {
  /**
   * Runs `run` once per (`scope`, `key`): a repeat of the same request (`content`) gets the first answer
   * (`replayed`), another request with the key a 422, one while the first is running a 409. An error is not
   * kept: the key is let go, so the client may repeat the request with it.
   */
  run(claim: { scope: string; key: string; content: unknown }, run: () => Promise<Answer>): Promise<Answer & { replayed: boolean }>;
}

/** JSON with object keys sorted, so the same content hashes the same whatever its key order. */
function canonicalJson(value: unknown): string {
  // Dates (parsed date-time fields) and the like, as JSON.stringify would write them.
  if (value && typeof (value as { toJSON?: unknown }).toJSON === "function") return canonicalJson((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The store is identity's (the gateway has no database), so every replica shares it. Answers are sealed
 * with a key derived from SECRET_KEY (AES-256-GCM, bound to their scope and key): a created webhook's
 * answer holds its whole secret, which must not lie readable in another service's table.
 */
export function idempotentRequests(identity: Client<typeof IdentityService>, secretKey: string): IdempotentRequests {
  const answers = sealer(secretKey, "formsvc idempotency answers");
  const seal = (answer: Answer, bound: string): Uint8Array => answers.seal(JSON.stringify(answer), bound);
  const open = (bytes: Uint8Array, bound: string): Answer => JSON.parse(answers.open(bytes, bound).toString("utf8")) as Answer;

  return {
    async run({ scope, key, content }, run) {
      const claim = { scope, key, requestHash: createHash("sha256").update(canonicalJson(content)).digest("base64url") };
      const bound = `${scope}\n${key}`;
      const begun = await identity.beginIdempotency(claim);
      switch (begun.outcome) {
        case Outcome.REPLAY:
          return { ...open(begun.body, bound), replayed: true };
        case Outcome.MISMATCH:
          throw new HttpError(422, "Idempotency-Key was already used with a different request");
        case Outcome.IN_PROGRESS:
          throw new HttpError(409, "a request with this Idempotency-Key is in progress: repeat it shortly", { "Retry-After": "1" });
        case Outcome.PROCEED:
          break;
        default:
          throw new Error(`unknown idempotency outcome ${begun.outcome}`);
      }
      let answer: Answer;
      try {
        answer = await run();
      } catch (err) {
        // Should letting go fail too, the claim lapses by itself after its lease.
        await identity.completeIdempotency({ ...claim, release: true }).catch(() => {});
        throw err;
      }
      // The work is done: its answer goes out even if it cannot be kept (repeats then wait for the lease).
      await identity.completeIdempotency({ ...claim, status: answer.status, body: seal(answer, bound) }).catch(() => {});
      return { ...answer, replayed: false };
    },
  };
}
