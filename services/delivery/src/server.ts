import { fileLinks } from "@formsvc/platform/file-links.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { resolveSecretKey } from "@formsvc/platform/secret-key.ts";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { keepFreshByNotices, webhookChangesChannel } from "@formsvc/platform/pg-notices.ts";
import { startChurnVacuum } from "@formsvc/platform/retention.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { entities } from "./entities/index.ts";
import { tablesOf } from "./entities/rows.ts";
import { HeldWebhooks } from "./held-webhooks.ts";
import { createDeliveryHandlers, routes } from "./handlers/delivery-handlers.ts";
import { createAcceptEvents } from "./intake/accept-event.ts";
import { startEmbeddedStream } from "./intake/embedded-stream.ts";
import { migrations } from "./migrations/index.ts";
import { deliveryRetention, ensurePartitions } from "./retention/partitions.ts";
import { DeliveryWorker } from "./worker/worker.ts";

await runDatabaseService("delivery", { schema: "delivery", entities, migrations }, async ({ config, logger, orm }) => {
  const webhooks = createServiceClient(WebhooksService, config.services.webhooks);
  const settings = {
    retrySchedule: config.webhookRetrySchedule,
    allowPrivateUrls: config.webhookAllowPrivateUrls,
    allowedCidrs: config.webhookAllowedCidrs,
    publicUrl: config.publicUrl,
    disableAfterFailingSeconds: config.webhookDisableAfterFailingSeconds,
    maxPerOriginConcurrency: config.webhookMaxOriginConcurrency,
  };
  if (settings.allowPrivateUrls) logger.warn("WEBHOOK_ALLOW_PRIVATE_URLS is on: webhooks may reach loopback and private addresses");

  const forms = createServiceClient(FormsService, config.services.forms);
  // File links in payloads are the gateway's: the same key and public address.
  const links = fileLinks(resolveSecretKey(config), config.publicUrl);
  // Webhooks are held while webhooks' change notices are listened for: fan-out and attempts then ask nothing.
  const held = config.webhookCache ? new HeldWebhooks() : undefined;
  const notices =
    held && keepFreshByNotices(held, { databaseUrl: config.databaseUrl!, channel: webhookChangesChannel, logger, onNotice: (notice) => held.changed(notice) });
  const heldOrAsked = held ? held.around(webhooks) : webhooks;
  // The partitions new deliveries go to, before the first event comes (the retention pass keeps making them).
  const { partitionSeconds, deliveryDays } = config.retention;
  await ensurePartitions(orm, { spanSeconds: partitionSeconds, logger });
  const worker = new DeliveryWorker({ orm, webhooks: heldOrAsked, logger, ...settings });
  const acceptEvents = createAcceptEvents({ orm, webhooks: heldOrAsked, fileLinks: links, logger, worker });
  const submissions = createServiceClient(SubmissionsService, config.services.submissions);
  const intake =
    config.kafkaBrokers.length > 0
      ? // The Kafka client (~60 MiB resident) is imported only when Kafka is configured.
        (await import("./intake/kafka-consumer.ts")).startKafkaIntake({ brokers: config.kafkaBrokers, acceptEvents, logger })
      : startEmbeddedStream({
          orm,
          submissions,
          acceptEvents,
          logger,
        });
  logger.info({ bus: config.kafkaBrokers.length > 0 ? "kafka" : "embedded", retrySchedule: settings.retrySchedule }, "delivery intake started");
  worker.start();
  // A failing webhook's row comes and goes with its attempts' outcomes: vacuumed each minute, its pages are reused.
  const churn = startChurnVacuum(orm, [tablesOf(orm).failingWebhooks], { logger });

  return {
    retention: [deliveryRetention(orm, { retentionMs: deliveryDays * 86_400_000, spanSeconds: partitionSeconds, logger })],
    routes: (router) => routes(router, createDeliveryHandlers({ orm, webhooks, forms, submissions, fileLinks: links, logger, ...settings, onRecovered: () => worker.dueStored() })),
    // On stop, after the RPC server: stop taking events (offsets committed), let the attempts under way be
    // recorded, then the database closes. An attempt cut short anyway is not lost: its lease runs out.
    close: async () => {
      const results = await Promise.allSettled([intake.stop(), worker.stop()]);
      for (const r of results) if (r.status === "rejected") logger.warn({ err: r.reason }, "stopping delivery work failed");
      await notices?.stop();
      await churn.stop();
    },
  };
});
