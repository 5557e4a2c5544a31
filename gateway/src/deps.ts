import type { Client } from "@connectrpc/connect";
import type { SignUpPolicy } from "@formsvc/platform/config.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { FileLinks } from "@formsvc/platform/file-links.ts";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import type { DeliveryService } from "@formsvc/proto/delivery/v1/delivery_pb.js";
import type { Health } from "@formsvc/proto/grpc/health/v1/health_pb.js";
import type { OidcProvider } from "./app-api/oidc-client.ts";
import type { AuditTrail } from "./audit/trail.ts";
import type { CaptchaDeps } from "./hosted/captcha.ts";
import type { HostedFormDeps } from "./hosted/routes.ts";
import type { InsightsCounter } from "./hosted/insights.ts";
import type { IdempotentRequests } from "./idempotency.ts";

/** What the gateway is made of: the services behind it and its settings. */
export interface GatewayDeps {
  logger: Logger;
  identity: Client<typeof IdentityService>;
  forms: Client<typeof FormsService>;
  submissions: Client<typeof SubmissionsService>;
  webhooks: Client<typeof WebhooksService>;
  delivery: Client<typeof DeliveryService>;
  fileLinks: FileLinks;
  /** Where POSTs with an Idempotency-Key are run once (identity's store). */
  idempotency: IdempotentRequests;
  /** Health clients of the services the gateway needs, for /readyz. */
  health: Record<string, Client<typeof Health>>;
  /** The hosted forms' limits (per address, uploads) and the API's per key. */
  rateLimits: HostedFormDeps["rateLimits"] & { perKey: number };
  publicUrl: string;
  /** The hosted forms' proof-of-work captcha: its secret and where spent solutions are kept. */
  captcha?: CaptchaDeps;
  /** Where "Made with formsvc" links (BRANDING_URL). */
  brandingUrl: string;
  /** Header carrying the respondent's country (COUNTRY_HEADER). */
  countryHeader: string;
  trustProxy: boolean | number | string;
  /** SIGNUP, which /app/api/session tells the app (identity enforces it); open when absent. */
  signUp?: SignUpPolicy;
  /** Sign-in through an OpenID Connect provider (OIDC_*); absent when none is configured. */
  oidc?: OidcProvider;
  /** Where the doors and sign-ins record audit events (identity's log); none recorded when absent. */
  audit?: AuditTrail;
  /** Where the hosted pages count views, starts and completions (insights); nothing counted when absent. */
  insights?: InsightsCounter;
}

/** The services the resource routes call, and the signer of their file links. */
export type ResourceDeps = Pick<GatewayDeps, "identity" | "forms" | "submissions" | "webhooks" | "delivery" | "fileLinks" | "publicUrl">;
