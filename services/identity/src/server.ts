import { mailSettingsOf, mailTransport, startMailWorker } from "@formsvc/platform/mail.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { entities } from "./entities/index.ts";
import { createIdentityHandlers, routes } from "./handlers/identity-handlers.ts";
import { sweepIdempotencyKeys } from "./idempotency.ts";
import { migrations } from "./migrations/index.ts";

/** How often expired Idempotency-Keys are swept. */
const sweepIntervalMs = 60 * 60 * 1000;

await runDatabaseService("identity", { schema: "identity", entities, migrations }, ({ orm, logger, config }) => {
  // Password resets, email verifications and invitations go out from identity's outbox.
  const mail = startMailWorker({ orm, transport: mailTransport(mailSettingsOf(config)), logger });
  const handlers = createIdentityHandlers({ orm, publicUrl: config.publicUrl, mailWritten: mail.wake });
  const sweep = setInterval(() => {
    sweepIdempotencyKeys(orm, new Date()).then(
      (keys) => keys > 0 && logger.info({ keys }, "expired idempotency keys swept"),
      (err: unknown) => logger.warn({ err }, "sweeping idempotency keys failed"),
    );
  }, sweepIntervalMs);
  return {
    routes: (router) => routes(router, handlers),
    close: async () => {
      clearInterval(sweep);
      await mail.stop();
    },
  };
});
