import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { loadConfig, serviceNames } from "@formsvc/platform/config.ts";
import { drainable } from "@formsvc/platform/http-drain.ts";
import { noteRequest } from "@formsvc/platform/idle-memory.ts";
import { ownProcess, stopOnSignals } from "@formsvc/platform/own-process.ts";
import { afterDrainMs, drainLimitMs } from "@formsvc/platform/stopping.ts";
import { Health } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import { createLogger } from "@formsvc/platform/logger.ts";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { resolveSecretKey } from "@formsvc/platform/secret-key.ts";
import { fileLinks } from "@formsvc/platform/file-links.ts";
import { createApp } from "./app.ts";
import { oidcProvider } from "./app-api/oidc-client.ts";
import { AuditTrail } from "./audit/trail.ts";
import { InsightsCounter } from "./hosted/insights.ts";
import { idempotentRequests } from "./idempotency.ts";
import { Redis } from "ioredis";
import { memoryReplayStore, redisReplayStore } from "./hosted/captcha.ts";
import { RedisSlidingWindow } from "./rate-limit/redis-sliding-window.ts";
import { MemorySlidingWindow, type RateLimitStore } from "./rate-limit/sliding-window.ts";

const config = loadConfig();
const logger = createLogger("gateway", config.logLevel);
const tracing = await ownProcess("gateway", logger);
const identity = createServiceClient(IdentityService, config.services.identity);
const secretKey = resolveSecretKey(config);
const store: RateLimitStore = config.redisUrl ? new RedisSlidingWindow(config.redisUrl) : new MemorySlidingWindow();
const forms = createServiceClient(FormsService, config.services.forms);
const webhooks = createServiceClient(WebhooksService, config.services.webhooks);
const audit = new AuditTrail({ identity, forms, webhooks, logger });
const submissions = createServiceClient(SubmissionsService, config.services.submissions);
const insights = new InsightsCounter({ submissions, logger });

const app = createApp({
  logger,
  identity,
  forms,
  submissions,
  webhooks,
  delivery: createServiceClient(DeliveryService, config.services.delivery),
  fileLinks: fileLinks(secretKey, config.publicUrl),
  idempotency: idempotentRequests(identity, secretKey),
  health: Object.fromEntries(serviceNames.map((name) => [name, createServiceClient(Health, config.services[name])])),
  rateLimits: {
    store,
    perKey: config.rateLimitPerKey,
    perIp: config.rateLimitPerIp,
    uploadsPerIp: config.uploadRatePerIp,
    uploadBytesPerIp: config.uploadBytesPerIp,
    publicWritesPerIp: config.responseRatePerIp,
  },
  publicUrl: config.publicUrl,
  captcha: {
    secret: secretKey,
    verifyUrls: config.captchaVerifyUrls,
    replays: config.redisUrl ? redisReplayStore(new Redis(config.redisUrl, { maxRetriesPerRequest: 2 })) : memoryReplayStore(),
  },
  brandingUrl: config.brandingUrl,
  countryHeader: config.countryHeader,
  trustProxy: config.trustProxy,
  signUp: config.signUp,
  oidc: config.oidc && oidcProvider(config.oidc, config.publicUrl, secretKey, logger),
  audit,
  insights,
});

// Express 5 calls back with the listen error too (a busy port): one line naming the variable to change.
const server = app.listen(config.port, (err?: Error) => {
  if (err) {
    const busy = (err as NodeJS.ErrnoException).code === "EADDRINUSE";
    logger.fatal({ err }, busy ? `port ${config.port} is already in use: set PORT to another port` : "gateway cannot listen");
    process.exit(1);
  }
  const { port } = server.address() as AddressInfo;
  logger.info({ port, rateLimits: config.redisUrl ? "redis" : "memory", tracing: tracing ? "otlp" : "off" }, "gateway listening");
  process.send?.({ ready: "gateway", port });
});
// Each request tells the idle-memory watcher the gateway is serving (no heap release in the middle of a trickle).
server.on("request", noteRequest);

const drain = drainable(server);
server.on("error", (err) => {
  logger.fatal({ err }, "gateway server failed");
  process.exit(1);
});
// A host that imports this entry (ONE_PROCESS) knows the gateway is ready when the import settles.
await once(server, "listening");

// Finish the requests in flight, each keep-alive connection closing after its response (drainable), for at most
// drainLimitMs: the launcher and Kubernetes' terminationGracePeriodSeconds wait longer (stopping.ts).
stopOnSignals("gateway", logger, async () => {
  const { cut, ms } = await drain(drainLimitMs);
  if (cut > 0) logger.warn({ cut, ms }, `connections still open after ${drainLimitMs / 1000} s of draining were closed`);
  else logger.info({ ms }, "every request in flight was answered");
  // The events and counts of the requests just answered, while identity and submissions still run (the services stop after the gateway).
  await Promise.all([audit.stop(afterDrainMs / 2), insights.stop()]);
  await Promise.allSettled([store.close(), tracing?.shutdown()]);
});
