// Submissions' RPC service: the handler object composed of its parts (context.ts is what they share) and
// routes(router).
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { createInsightsHandlers } from "../insights/insights-handlers.ts";
import { emailVerifications } from "../links/email-verifications.ts";
import { responseLinks } from "../links/response-links.ts";
import { submissionsContext, type SubmissionsHandlersDeps } from "./context.ts";
import { fileHandlers } from "./files.ts";
import { intakeHandlers } from "./intake.ts";
import { internalHandlers } from "./internal.ts";
import { readHandlers } from "./reads.ts";

export type { SubmissionsHandlersDeps } from "./context.ts";

export function createSubmissionsHandlers(deps: SubmissionsHandlersDeps): ServiceImpl<typeof SubmissionsService> {
  const c = submissionsContext(deps);
  const { orm, forms, logger, now } = c;
  const links = responseLinks({ orm, forms, logger, now });
  const emails = emailVerifications({ orm, forms, logger, now, mailWritten: deps.mailWritten });
  return {
    ...createInsightsHandlers({ orm, forms, logger }),
    ...links.handlers,
    ...emails.handlers,
    ...intakeHandlers(c, { links, emails }),
    ...fileHandlers(c),
    ...readHandlers(c),
    ...internalHandlers(c),
  };
}

export function routes(router: ConnectRouter, handlers: ServiceImpl<typeof SubmissionsService>): void {
  router.service(SubmissionsService, handlers);
}
