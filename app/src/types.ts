// The JSON shapes of /app/api (see gateway/src/app-api/routes.ts; records as @formsvc/api-records makes them).
import type { FormDocument, FormSettings } from "@formsvc/form-document";

export type { Block, BlockType, CalculatedField, FormDocument, FormSettings, HiddenField, InputBlock } from "@formsvc/form-document";

export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: string;
}

export interface Workspace {
  id: string;
  name: string;
  plan: "free" | "pro";
  personal: boolean;
  entitlements: { removeBranding: boolean };
  createdAt: string;
  ownerId: string;
  owned: boolean;
  /** The signed-in person's role in it. */
  role: Role;
}

/** Owner (one, who made it; changes the plan), admin (manages members, deletes forms), member. */
export type Role = "owner" | "admin" | "member";

export interface Member {
  user: User;
  role: Role;
  joinedAt: string | null;
}

export type FormStatus = "draft" | "published" | "closed";

export interface Form {
  id: string;
  workspaceId: string;
  name: string;
  status: FormStatus;
  document: FormDocument;
  settings: FormSettings;
  version: number;
  responseCount: number;
  createdAt: string;
  updatedAt: string;
  trashedAt: string | null;
}

export interface Question {
  id: string;
  type: string;
  label: string;
  key: string;
}

export interface Answer {
  questionId: string;
  type: string;
  label: string;
  value: unknown;
  files?: { name: string; url: string }[];
  /** The answer as text, option ids turned into their text in the version the respondent saw. */
  display: string;
}

export interface Submission {
  id: string;
  formId: string;
  version: number;
  completed: boolean;
  createdAt: string;
  updatedAt: string;
  submittedAt: string | null;
  answers: Record<string, Answer>;
}

export interface Page<T> {
  items: T[];
  page?: number;
  limit?: number;
  hasMore?: boolean;
}

export interface Webhook {
  id: string;
  formId: string;
  url: string;
  secret: string | null;
  headers: Record<string, string>;
  /** The events it receives (FORM_RESPONSE, ...). */
  eventTypes: string[];
  enabled: boolean;
  /** Why and when it was disabled; null while enabled. */
  disabledReason: string | null;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Delivery {
  id: string;
  webhookId: string;
  eventId: string;
  status: "pending" | "retrying" | "succeeded" | "failed";
  attempts: number;
  lastError: string | null;
  lastStatusCode: number | null;
  nextAttemptAt: string | null;
  submissionId: string;
  eventType: string;
  /** `event`: an event of the form; `test`: a test event, never retried automatically. */
  trigger: "event" | "test";
  createdAt: string;
  updatedAt: string;
}

export interface Attempt {
  id: string;
  number: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string;
  manual: boolean;
  createdAt: string;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}
