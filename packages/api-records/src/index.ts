// The public JSON shape of each record, shared by the REST API and the operator CLI.
import { toJson } from "@bufbuild/protobuf";
import { timestampDate, ValueSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Plan, type ApiKey, type User, type Workspace } from "@formsvc/proto/identity/v1/identity_pb.js";
import { FormStatus, type Form, type Question } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { Submission } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { Webhook } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { DeliveryStatus, type Attempt, type Delivery } from "@formsvc/proto/delivery/v1/delivery_pb.js";

const iso = (t: Timestamp | undefined): string | null => (t ? timestampDate(t).toISOString() : null);

export const planNames: Record<Plan, string> = {
  [Plan.UNSPECIFIED]: "free",
  [Plan.FREE]: "free",
  [Plan.PRO]: "pro",
};

export function planFromName(name: string | undefined): Plan | undefined {
  if (name === undefined) return Plan.UNSPECIFIED;
  return ({ free: Plan.FREE, pro: Plan.PRO } as Record<string, Plan>)[name];
}

export const formStatusNames: Record<FormStatus, string> = {
  [FormStatus.UNSPECIFIED]: "draft",
  [FormStatus.DRAFT]: "draft",
  [FormStatus.PUBLISHED]: "published",
  [FormStatus.CLOSED]: "closed",
};

export function userJson(user: User) {
  return { id: user.id, email: user.email, name: user.name, createdAt: iso(user.createdAt) };
}

export function workspaceJson(ws: Workspace) {
  return {
    id: ws.id,
    name: ws.name,
    plan: planNames[ws.plan],
    personal: ws.personal,
    entitlements: { removeBranding: ws.entitlements?.removeBranding ?? false },
    createdAt: iso(ws.createdAt),
  };
}

export function apiKeyJson(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: iso(key.createdAt),
    lastUsedAt: iso(key.lastUsedAt),
  };
}

export function formJson(form: Form) {
  return {
    id: form.id,
    workspaceId: form.workspaceId,
    name: form.name,
    status: formStatusNames[form.status],
    document: form.document ?? {},
    settings: form.settings ?? {},
    version: form.version,
    responseCount: Number(form.responseCount),
    createdAt: iso(form.createdAt),
    updatedAt: iso(form.updatedAt),
  };
}

export function questionJson(q: Question) {
  return { id: q.id, type: q.type, label: q.label, key: q.key };
}

/** A submission; `fileUrl` turns a stored file's id into a signed link. */
export function submissionJson(sub: Submission, fileUrl: (fileId: string) => string) {
  const answers: Record<string, unknown> = {};
  for (const [key, a] of Object.entries(sub.answers)) {
    answers[key] = {
      questionId: a.questionId,
      type: a.type,
      label: a.label,
      value: a.value ? toJson(ValueSchema, a.value) : null,
      ...(a.type === "FILE" || a.type === "SIGNATURE" ? { files: a.files.map((f) => ({ name: f.name, url: fileUrl(f.id) })) } : {}),
    };
  }
  return {
    id: sub.id,
    formId: sub.formId,
    version: sub.version,
    completed: sub.completed,
    createdAt: iso(sub.createdAt),
    updatedAt: iso(sub.updatedAt),
    submittedAt: iso(sub.submittedAt),
    answers,
  };
}

export function webhookJson(hook: Webhook) {
  return {
    id: hook.id,
    formId: hook.formId,
    url: hook.url,
    secret: hook.secret || null,
    headers: hook.headers,
    eventTypes: hook.eventTypes,
    enabled: hook.enabled,
    disabledReason: hook.disabledReason || null,
    disabledAt: iso(hook.disabledAt),
    previousSecretExpiresAt: iso(hook.previousSecretExpiresAt),
    createdAt: iso(hook.createdAt),
    updatedAt: iso(hook.updatedAt),
  };
}

const deliveryStatusNames: Record<DeliveryStatus, string> = {
  [DeliveryStatus.UNSPECIFIED]: "pending",
  [DeliveryStatus.PENDING]: "pending",
  [DeliveryStatus.RETRYING]: "retrying",
  [DeliveryStatus.SUCCEEDED]: "succeeded",
  [DeliveryStatus.FAILED]: "failed",
};

export function deliveryJson(d: Delivery) {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    status: deliveryStatusNames[d.status],
    attempts: d.attempts,
    lastError: d.lastError || null,
    lastStatusCode: d.lastStatusCode || null,
    nextAttemptAt: iso(d.nextAttemptAt),
    submissionId: d.submissionId,
    eventType: d.eventType,
    trigger: d.trigger,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
  };
}

export function attemptJson(a: Attempt) {
  return {
    id: a.id,
    number: a.number,
    statusCode: a.statusCode || null,
    durationMs: a.durationMs,
    error: a.error || null,
    responseBody: a.responseBody,
    manual: a.manual,
    createdAt: iso(a.createdAt),
  };
}
