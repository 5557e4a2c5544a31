// Idempotency keys of API and hosted requests, claimed before the request runs and completed with its answer.
import { Code, ConnectError } from "@connectrpc/connect";
import { BeginIdempotencyResponse_Outcome } from "@formsvc/proto/identity/v1/identity_pb.js";
import { beginIdempotency, completeIdempotency, type IdempotencyClaim } from "../idempotency.ts";
import type { IdentityContext, IdentityHandlers } from "./context.ts";

const Outcome = BeginIdempotencyResponse_Outcome;
const outcomes = { proceed: Outcome.PROCEED, mismatch: Outcome.MISMATCH, "in-progress": Outcome.IN_PROGRESS } as const;

export function idempotencyHandlers({ deps, now }: IdentityContext): Pick<IdentityHandlers, "beginIdempotency" | "completeIdempotency"> {
  return {
    async beginIdempotency(req) {
      const result = await beginIdempotency(deps.orm, idempotencyClaim(req), now());
      if (result.outcome === "replay") return { outcome: Outcome.REPLAY, status: result.status, body: result.body };
      return { outcome: outcomes[result.outcome] };
    },

    async completeIdempotency(req) {
      await completeIdempotency(deps.orm, idempotencyClaim(req), req.release ? { release: true } : { release: false, status: req.status, body: req.body });
      return {};
    },
  };
}

/** The claim an idempotency call names; every part is required. */
function idempotencyClaim(req: { scope: string; key: string; requestHash: string }): IdempotencyClaim {
  if (!req.scope || !req.key || !req.requestHash) throw new ConnectError("scope, key and request_hash are required", Code.InvalidArgument);
  return { scope: req.scope, key: req.key, requestHash: req.requestHash };
}
