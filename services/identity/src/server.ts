import { auditSettingsOf } from "@formsvc/platform/audit-settings.ts";
import { mailSettingsOf, mailTransport, startMailWorker } from "@formsvc/platform/mail.ts";
import { keepFreshByNotices } from "@formsvc/platform/pg-notices.ts";
import { resolveSecretKey } from "@formsvc/platform/secret-key.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { ApiKeyCache, apiKeyChangesChannel } from "./api-key-cache.ts";
import { entities } from "./entities/index.ts";
import { createIdentityHandlers, routes } from "./handlers/identity-handlers.ts";
import { migrations } from "./migrations/index.ts";
import { identityRetention } from "./retention.ts";

await runDatabaseService("identity", { schema: "identity", entities, migrations }, ({ orm, logger, config }) => {
  // Password resets, email verifications and invitations go out from identity's outbox.
  const mail = startMailWorker({ orm, transport: mailTransport(mailSettingsOf(config)), logger });
  // Verified API keys are held only while the notices that revoke them are listened for.
  const apiKeyCache = config.apiKeyCache ? new ApiKeyCache() : undefined;
  const notices =
    apiKeyCache &&
    keepFreshByNotices(apiKeyCache, { databaseUrl: config.databaseUrl!, channel: apiKeyChangesChannel, logger, onNotice: (notice) => apiKeyCache.revoke(notice) });
  const audit = auditSettingsOf();
  // Each audit event as one line of its own on stdout, beside (not through) the log, whatever LOG_LEVEL says.
  const auditLine = audit.stdout ? (line: string) => void process.stdout.write(`${line}\n`) : undefined;
  const handlers = createIdentityHandlers({
    orm,
    publicUrl: config.publicUrl,
    mailWritten: mail.wake,
    apiKeyCache,
    logger,
    signUp: config.signUp,
    secretKey: resolveSecretKey(config),
    auditLine,
  });
  return {
    routes: (router) => routes(router, handlers),
    retention: identityRetention(orm, { ...config.retention, auditRetentionDays: audit.retentionDays }),
    close: async () => {
      await notices?.stop();
      await mail.stop();
    },
  };
});
