// Test helpers of the delivery service: sample events, receivers on loopback, forms' fake knowing the
// sample form (webhooks' fake is services/webhooks/src/testing/fake-webhooks.ts). Imported by tests only.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create, fromJson, isMessage, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { createLogger } from "@formsvc/platform/logger.ts";
import { fileLinks } from "@formsvc/platform/file-links.ts";
import { envelopeOf } from "@formsvc/platform/events.ts";
import { EventSchema, ResponseCompletedSchema, type Event, type ResponseCompleted } from "@formsvc/proto/events/v1/events_pb.js";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { ListResponseEventsResponseSchema, type SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { createAcceptEvents, type AcceptEventDeps, type AcceptOptions } from "../intake/accept-event.ts";
import { FakeForms } from "../../../forms/src/testing/fake-forms.ts";

export const quietLogger = createLogger("delivery-test", "silent");

/** File links as the gateway makes them, with a test key. */
export const testFileLinks = fileLinks("test-secret-key", "https://forms.example.com");

/** The form every fake webhook belongs to, as forms' GetForm answers it (to its owner only). */
export const sampleForm: { id: string; name: string; document: JsonObject } = {
  id: "form_1",
  name: "Event sign-up",
  document: {
    title: "Event sign-up",
    blocks: [
      { id: "q1", key: "q_name", type: "SHORT_TEXT", question: "Your full name" },
      { id: "q2", key: "q_plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "o1", text: "Free" }, { id: "o2", text: "Pro" }] },
      { id: "q3", key: "q_cv", type: "FILE", question: "CV" },
    ],
    hiddenFields: [{ name: "utm_source" }],
    calculatedFields: [{ name: "score", type: "NUMBER", expression: "1" }],
  },
};

/** A forms client whose GetForm knows `sampleForm`, seen by `owner` only. */
export function fakeForms(owner = "user-ada"): Client<typeof FormsService> {
  const forms = new FakeForms();
  forms.add({ id: sampleForm.id, name: sampleForm.name, versions: [sampleForm.document], members: [owner] });
  return forms.client;
}

/** Submissions' ListResponseEvents, answering the latest of `events` (newest first) and noting each request. */
export function fakeSubmissions(events: Event[] = []) {
  const asked: { formId: string; eventType: string; limit: number }[] = [];
  const client: Pick<Client<typeof SubmissionsService>, "listResponseEvents"> = {
    async listResponseEvents(req) {
      asked.push({ formId: req.formId ?? "", eventType: req.eventType ?? "", limit: req.limit ?? 0 });
      return create(ListResponseEventsResponseSchema, { events: events.slice(0, req.limit) });
    },
  };
  return { client, events, asked };
}

/** acceptEvents one event at a time, as most tests hand them over. */
export function createAcceptEvent(deps: AcceptEventDeps) {
  const acceptEvents = createAcceptEvents(deps);
  // A bare ResponseCompleted is a FORM_RESPONSE, as the buses read one written before the envelope.
  return (event: ResponseCompleted | Event, options?: AcceptOptions) => acceptEvents([{ event: isMessage(event, EventSchema) ? event : envelopeOf(event) }], options);
}
export type AcceptEvent = ReturnType<typeof createAcceptEvent>;

let eventCounter = 0;

/** A ResponseCompleted with a few answers; a new event id each time unless given. */
export function sampleEvent(overrides: { eventId?: string; formId?: string; responseId?: string; submittedAt?: Date } = {}): ResponseCompleted {
  eventCounter += 1;
  return create(ResponseCompletedSchema, {
    eventId: overrides.eventId ?? `evt_${process.pid}_${eventCounter}`,
    responseId: overrides.responseId ?? `resp_${eventCounter}`,
    formId: overrides.formId ?? "form_1",
    workspaceId: "ws_1",
    formVersion: 2,
    submittedAt: timestampFromDate(overrides.submittedAt ?? new Date("2026-03-01T10:20:30.456Z")),
    formName: "Event sign-up",
    fields: [
      { questionId: "q1", type: "SHORT_TEXT", label: "Your full name", value: fromJson(ValueSchema, "Ada Lovelace") },
      { questionId: "q2", type: "NUMBER", label: "Age", value: fromJson(ValueSchema, 36) },
      {
        questionId: "q3",
        type: "CHECKBOXES",
        label: "Interests",
        value: fromJson(ValueSchema, ["o1", "o2"]),
        options: [
          { id: "o1", text: "Music" },
          { id: "o2", text: "Art" },
          { id: "o3", text: "Sport" },
        ],
      },
      {
        questionId: "q4",
        type: "FILE",
        label: "CV",
        value: fromJson(ValueSchema, ["up_1"]),
        files: [{ id: "up_1", name: "cv.pdf", contentType: "application/pdf", size: 1234n }],
      },
      { questionId: "q5", type: "EMAIL", label: "Email" },
    ],
    hiddenFields: { utm_source: fromJson(ValueSchema, "newsletter") },
    calculatedFields: { score: fromJson(ValueSchema, 7) },
    respondentCountry: "DE",
    respondentLanguage: "de",
  });
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  url: string;
}

export interface Answer {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests being answered right now, by webhook-id, and the most seen at once. */
  concurrentByEvent: Map<string, number>;
  maxConcurrentPerEvent: number;
  maxConcurrent: number;
  answer: (req: Received) => Answer;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 answering what `answer` says (200 by default). */
export async function startReceiver(answer: (req: Received) => Answer = () => ({ status: 200 })): Promise<Receiver> {
  let current = 0;
  const receiver: Receiver = {
    url: "",
    port: 0,
    received: [],
    concurrentByEvent: new Map(),
    maxConcurrentPerEvent: 0,
    maxConcurrent: 0,
    answer,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = undefined;
      }
      const got: Received = { headers: req.headers, raw, body, url: req.url ?? "" };
      receiver.received.push(got);
      const id = String(req.headers["webhook-id"] ?? "");
      const n = (receiver.concurrentByEvent.get(id) ?? 0) + 1;
      receiver.concurrentByEvent.set(id, n);
      receiver.maxConcurrentPerEvent = Math.max(receiver.maxConcurrentPerEvent, n);
      current += 1;
      receiver.maxConcurrent = Math.max(receiver.maxConcurrent, current);
      const a = receiver.answer(got);
      const respond = () => {
        receiver.concurrentByEvent.set(id, (receiver.concurrentByEvent.get(id) ?? 1) - 1);
        current -= 1;
        if (res.destroyed) return;
        res.writeHead(a.status ?? 200, { "content-type": "text/plain", ...a.headers });
        res.end(a.body ?? "ok");
      };
      if (a.delayMs) setTimeout(respond, a.delayMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

/** A loopback port nobody listens on (connections to it are refused). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export { eventually } from "@formsvc/platform/testing/eventually.ts";
