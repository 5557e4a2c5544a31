// Raw SQL helpers shared by the intake, the worker and the handlers: the schema-qualified table names
// and the mapping of a raw `deliveries` row to the entity's shape.
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import { AttemptEntity } from "./attempt.ts";
import { CursorEntity } from "./cursor.ts";
import { DeliveryEntity, type Delivery, type DeliveryStatusName } from "./delivery.ts";
import { FailingWebhookEntity } from "./failing-webhook.ts";
import { PayloadEntity } from "./payload.ts";

export interface Tables {
  deliveries: string;
  attempts: string;
  payloads: string;
  cursor: string;
  failingWebhooks: string;
}

/** `"<schema>"."<table>"` of every table, for raw SQL. */
export function tablesOf(orm: MikroORM): Tables {
  return {
    deliveries: qualifiedTable(orm, DeliveryEntity),
    attempts: qualifiedTable(orm, AttemptEntity),
    payloads: qualifiedTable(orm, PayloadEntity),
    cursor: qualifiedTable(orm, CursorEntity),
    failingWebhooks: qualifiedTable(orm, FailingWebhookEntity),
  };
}

/** A timestamp column of a raw row: the driver gives timestamptz as text ("2026-01-01 10:00:00.123456+00"). */
export function toDate(value: Date | string): Date;
export function toDate(value: Date | string | null): Date | null;
export function toDate(value: Date | string | null): Date | null {
  if (value === null || value instanceof Date) return value;
  return new Date(value);
}

/** A `deliveries` row as the driver returns it (timestamps as text), with its payload's body (`withPayload`). */
export interface DeliveryRow {
  id: string;
  event_at: Date | string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  trigger: "event" | "test";
  form_id: string;
  submission_id: string;
  origin: string;
  payload: string;
  status: DeliveryStatusName;
  attempts: number;
  last_error: string;
  last_status_code: number;
  next_attempt_at: Date | string | null;
  locked_until: Date | string | null;
  lease_id: string | null;
  schedule_step: number;
  trace_parent: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export function deliveryFromRow(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    eventAt: toDate(row.event_at),
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.event_type,
    trigger: row.trigger,
    formId: row.form_id,
    submissionId: row.submission_id,
    origin: row.origin,
    payload: row.payload,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    lastStatusCode: row.last_status_code,
    nextAttemptAt: toDate(row.next_attempt_at),
    lockedUntil: toDate(row.locked_until),
    leaseId: row.lease_id,
    scheduleStep: row.schedule_step,
    traceParent: row.trace_parent,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  } as Delivery;
}

/** The body a delivery sends, as a column of a query over `deliveries` aliased `alias`: its event's payload. */
export function payloadColumn(tables: Tables, alias = "d"): string {
  return `(select p."body" from ${tables.payloads} p where p."event_id" = ${alias}."event_id" and p."event_at" = ${alias}."event_at") as "payload"`;
}
