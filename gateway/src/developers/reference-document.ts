import { createClient, createRouterTransport } from "@connectrpc/connect";
import { fileLinks } from "@formsvc/platform/file-links.ts";
import { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { apiRoutes } from "../routes/index.ts";
import type { ApiRoute } from "../routes/route.ts";
import { buildOpenApiDocument } from "./openapi.ts";

/** The route table as the gateway mounts it, with clients that are never connected: for reading, not serving. */
export function offlineApiRoutes(publicUrl: string): ApiRoute[] {
  const unconnected = createRouterTransport(() => {});
  return apiRoutes({
    identity: createClient(IdentityService, unconnected),
    forms: createClient(FormsService, unconnected),
    submissions: createClient(SubmissionsService, unconnected),
    webhooks: createClient(WebhooksService, unconnected),
    delivery: createClient(DeliveryService, unconnected),
    fileLinks: fileLinks("unused", publicUrl),
    publicUrl,
  });
}

/**
 * The document a gateway at `publicUrl` serves at /developers/openapi.json, built without any service to
 * talk to: what the SDK's types are generated from and the linters read.
 */
export function referenceDocument(publicUrl: string): Record<string, unknown> {
  return buildOpenApiDocument(offlineApiRoutes(publicUrl), publicUrl);
}
