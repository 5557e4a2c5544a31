import { mailSettingsOf, mailTransport, startMailWorker } from "@formsvc/platform/mail.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { NoticeKeptCache } from "@formsvc/platform/notice-kept-cache.ts";
import { formChangesChannel, keepFreshByNotices } from "@formsvc/platform/pg-notices.ts";
import { startChurnVacuum } from "@formsvc/platform/retention.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { FormsService, type Form } from "@formsvc/proto/forms/v1/forms_pb.js";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { createCalculatedFieldsPool } from "./calculated-fields-pool.ts";
import { recordCutOff } from "./calculated-field-problems.ts";
import { createCompletionNotifier } from "./outbox/completion-notifier.ts";
import { entities } from "./entities/index.ts";
import { createLocalFileStore, defaultFilesDir } from "./files/local-file-store.ts";
import { sweepAbandonedUploads, sweepUnattachedUploads } from "./files/sweep-uploads.ts";
import { createSubmissionsHandlers, routes } from "./handlers/submissions-handlers.ts";
import { migrations } from "./migrations/index.ts";
import { startResponseNotifier } from "./notifications/notifier.ts";
import { registerOutboxBacklog } from "./outbox/outbox-metrics.ts";
import type { OutboxConsumers } from "./outbox/outbox-retention.ts";
import { countChangesTable, responseCountsTable, startResponseCountPusher } from "./response-counts.ts";
import { submissionsRetention } from "./retention.ts";
import { startSummaryFolder, summaryTables, syncSummaryTallies } from "./summary/summary-counts.ts";

await runDatabaseService("submissions", { schema: "submissions", entities, migrations }, async ({ config, logger, orm }) => {
  const forms = createServiceClient(FormsService, config.services.forms);
  // An S3-compatible bucket when S3_* is set (every replica sees every file); else a directory under DATA_DIR.
  // The AWS SDK (~34 MiB resident) and the Kafka client (~60 MiB) are imported only when configured.
  const files = config.s3
    ? (await import("./files/s3-file-store.ts")).createS3FileStore(config.s3)
    : createLocalFileStore(defaultFilesDir(config.dataDir));
  const completions = createCompletionNotifier();
  const calculatedFields = createCalculatedFieldsPool({ deadlineMs: config.calculatedFieldTimeoutMs, logger, onCutOff: recordCutOff(orm, logger) });
  // Response counts are submissions' own; forms' copy is pushed off the respondent's path.
  const countChanges = createCompletionNotifier();
  const counts = startResponseCountPusher({ orm, forms, logger, changes: countChanges });
  // The pusher's fold deletes every change it adds up and rewrites each form's count row (4 times a second
  // under load: +0.7 MiB an hour in the soak on an autovacuum-off server): vacuumed each minute, pages are reused.
  // The summary's counts: each type's tally for the trigger, and its changes folded the same way.
  await syncSummaryTallies(orm);
  const summaryFolder = startSummaryFolder({ orm, logger, changes: countChanges });
  const summary = summaryTables(orm.em);
  const churn = startChurnVacuum(orm, [countChangesTable(orm), responseCountsTable(orm), summary.changes, summary.counts], { logger });
  // Open forms are held while forms' change notices are listened for: a submit then asks forms nothing.
  const openForms = config.openFormCache ? new NoticeKeptCache<Form>({ maxEntries: 10_000 }) : undefined;
  const formNotices =
    openForms &&
    keepFreshByNotices(openForms, { databaseUrl: config.databaseUrl!, channel: formChangesChannel, logger, onNotice: (formId) => openForms.forget(formId) });
  // Mails written off the respondent's path (notifications, receipts, email verification codes), sent by the mail worker.
  const mail = startMailWorker({ orm, transport: mailTransport(mailSettingsOf(config)), logger });
  const handlers = createSubmissionsHandlers({ orm, forms, files, quotas: config.files, logger, completions, calculatedFields, countChanges, openForms, mailWritten: mail.wake });
  // With Kafka, the outbox goes to `formsvc.responses`; without, delivery reads it by StreamCompletions.
  const relay =
    config.kafkaBrokers.length > 0
      ? (await import("./outbox/kafka-relay.ts")).startKafkaRelay({ orm, brokers: config.kafkaBrokers, logger, completions })
      : undefined;
  // The outbox's consumers: the bus (the relay, or delivery's stream by what it acknowledges) and the notifier.
  const consumers: OutboxConsumers = { bus: relay ? "kafka" : "embedded", notifications: true };
  registerOutboxBacklog(orm, consumers.bus, logger);
  const identity = createServiceClient(IdentityService, config.services.identity);
  const notifier = startResponseNotifier({ orm, forms, identity, logger, publicUrl: config.publicUrl, completions, mailWritten: mail.wake });

  const { unattachedTtlSeconds, abandonedTtlSeconds, sweepIntervalSeconds } = config.files;
  const sweep = async () => {
    try {
      const unattached = await sweepUnattachedUploads({ orm, files, logger, createdBefore: new Date(Date.now() - unattachedTtlSeconds * 1000) });
      const abandoned = await sweepAbandonedUploads({ orm, files, logger, updatedBefore: new Date(Date.now() - abandonedTtlSeconds * 1000) });
      if (unattached + abandoned > 0) logger.info({ unattached, abandoned }, "uploads swept");
    } catch (err) {
      logger.warn({ err }, "sweeping uploads failed");
    }
  };
  setInterval(sweep, sweepIntervalSeconds * 1000).unref();

  // After the RPC server has closed (no completion comes in any more): the in-flight batch finishes.
  return {
    routes: (router) => routes(router, handlers),
    retention: submissionsRetention(orm, config.retention, consumers),
    close: async () => {
      await formNotices?.stop();
      await relay?.stop();
      await counts.stop();
      await summaryFolder.stop();
      await churn.stop();
      await notifier.stop();
      await mail.stop();
      await calculatedFields.close();
    },
  };
});
