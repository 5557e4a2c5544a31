// The table of resource routes: every entry, in the order of the reference, whichever doors serve it.
import type { ResourceDeps } from "../deps.ts";
import { administrationRoutes } from "./administration.ts";
import { apiKeyRoutes } from "./api-keys.ts";
import { autoJoinRoutes } from "./auto-join.ts";
import { auditEventRoutes } from "./audit-events.ts";
import { formRoutes } from "./forms.ts";
import { insightRoutes } from "./insights.ts";
import { servedAt, type ApiRoute, type Route, type ServedRoute } from "./route.ts";
import { responseLinkRoutes } from "./response-links.ts";
import { submissionRoutes } from "./submissions.ts";
import { userRoutes } from "./users.ts";
import { webhookRoutes } from "./webhooks.ts";
import { workspaceRoutes } from "./workspaces.ts";

function resourceRoutes(deps: ResourceDeps): Route[] {
  return [
    ...userRoutes(deps.identity),
    ...workspaceRoutes(deps.identity),
    ...auditEventRoutes(deps.identity),
    ...formRoutes(deps.forms),
    ...submissionRoutes(deps.submissions, deps.forms, deps.fileLinks),
    ...insightRoutes(deps.submissions),
    ...responseLinkRoutes(deps.submissions, deps.publicUrl),
    ...webhookRoutes(deps.webhooks, deps.delivery),
    ...apiKeyRoutes(deps.identity),
    ...administrationRoutes(deps.identity),
    ...autoJoinRoutes(deps.identity),
  ];
}

/** Every REST endpoint under /api/v1, in the order of the reference. */
export function apiRoutes(deps: ResourceDeps): ApiRoute[] {
  return resourceRoutes(deps).flatMap((route) => servedAt(route, "api") ?? []);
}

/** Every resource route of /app/api. */
export function appRoutes(deps: ResourceDeps): ServedRoute[] {
  return resourceRoutes(deps).flatMap((route) => servedAt(route, "app") ?? []);
}
