import { mailSettingsOf, mailTransport, startMailWorker } from "@formsvc/platform/mail.ts";
import { keepFreshByNotices } from "@formsvc/platform/pg-notices.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { ApiKeyCache, apiKeyChangesChannel } from "./api-key-cache.ts";
import { entities } from "./entities/index.ts";
import { createIdentityHandlers, routes } from "./handlers/identity-handlers.ts";
import { sweepIdempotencyKeys } from "./idempotency.ts";
import { migrations } from "./migrations/index.ts";

/** How often expired Idempotency-Keys are swept. */
const sweepIntervalMs = 60 * 60 * 1000;

await runDatabaseService("identity", { schema: "identity", entities, migrations }, ({ orm, logger, config }) => {
  // Password resets, email verifications and invitations go out from identity's outbox.
  const mail = startMailWorker({ orm, transport: mailTransport(mailSettingsOf(config)), logger });
  // Verified API keys are held only while the notices that revoke them are listened for.
  const apiKeyCache = config.apiKeyCache ? new ApiKeyCache() : undefined;
  const notices =
    apiKeyCache &&
    keepFreshByNotices(apiKeyCache, { databaseUrl: config.databaseUrl!, channel: apiKeyChangesChannel, logger, onNotice: (notice) => apiKeyCache.revoke(notice) });
  const handlers = createIdentityHandlers({ orm, publicUrl: config.publicUrl, mailWritten: mail.wake, apiKeyCache });
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
      await notices?.stop();
      await mail.stop();
    },
  };
});
