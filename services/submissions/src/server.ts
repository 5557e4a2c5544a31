import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { runDatabaseService } from "@formsvc/platform/service-main.ts";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { createCompletionNotifier } from "./completion-notifier.ts";
import { entities } from "./entities/index.ts";
import { createLocalFileStore, defaultFilesDir } from "./files/local-file-store.ts";
import { sweepUnattachedUploads, unattachedUploadTtlMs } from "./files/sweep-uploads.ts";
import { createSubmissionsHandlers, routes } from "./handlers/submissions-handlers.ts";
import { migrations } from "./migrations/index.ts";
import { startKafkaRelay } from "./relay/kafka-relay.ts";
import { registerOutboxBacklog } from "./relay/outbox-metrics.ts";

/** How often uploads that no response took are swept. */
const sweepEveryMs = 60 * 60 * 1000;

await runDatabaseService("submissions", { schema: "submissions", entities, migrations }, ({ config, logger, orm }) => {
  const forms = createServiceClient(FormsService, config.services.forms);
  // The embedded default: files in a directory under DATA_DIR. An S3 store (S3_*) plugs in here.
  const files = createLocalFileStore(defaultFilesDir(config.dataDir));
  const completions = createCompletionNotifier();
  const handlers = createSubmissionsHandlers({ orm, forms, files, logger, completions });
  // With Kafka, the outbox goes to `formsvc.responses`; without, delivery reads it by StreamCompletions.
  const relay = config.kafkaBrokers.length > 0 ? startKafkaRelay({ orm, brokers: config.kafkaBrokers, logger, completions }) : undefined;
  registerOutboxBacklog(orm, logger);

  const sweep = () =>
    sweepUnattachedUploads({ orm, files, logger, createdBefore: new Date(Date.now() - unattachedUploadTtlMs) })
      .then((swept) => swept > 0 && logger.info({ swept }, "unattached uploads swept"))
      .catch((err: unknown) => logger.warn({ err }, "sweeping unattached uploads failed"));
  setInterval(sweep, sweepEveryMs).unref();

  // After the RPC server has closed (no completion comes in any more): the in-flight batch finishes.
  return { routes: (router) => routes(router, handlers), close: async () => relay?.stop() };
});
