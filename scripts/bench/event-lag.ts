// Lag of each event type, from the event's own time (submittedAt, savedAt, changedAt) to the receiver's
// read of its POST, at `perSecond` events a second (open loop), on the embedded bus or Kafka: p50 and p99.
// `node scripts/bench/event-lag.ts [embedded|kafka]... [--events N] [--rate R]` prints one JSON line per bus.
// Form events (published, closed, trashed) are made over the forms RPC, as the CLI does, one form each.
import { join } from "node:path";
import { createServiceClient } from "@formsvc/platform/rpc.ts";
import { FormStatus, FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startKafka } from "../../deploy/kafka/kafka-runner.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver, type Received } from "../../tests/support/receiver.ts";
import { createUserWithKey, startTestSystem } from "../../tests/support/system.ts";
import { quantile, sleep } from "./common.ts";

const allTypes = ["FORM_RESPONSE", "FORM_RESPONSE_PARTIAL", "FORM_PUBLISHED", "FORM_CLOSED", "FORM_DELETED"];

/** When the event was born, by type: the payload's own time. */
function bornAt(body: { eventType: string; data: Record<string, string> }): number {
  const { data } = body;
  return Date.parse(data.submittedAt ?? data.savedAt ?? data.changedAt);
}

/** Runs `make(n)` for n < total at `perSecond`, whatever each takes (at most 256 in flight). */
async function paced(total: number, perSecond: number, make: (n: number) => Promise<unknown>): Promise<void> {
  const start = performance.now();
  const pending = new Set<Promise<unknown>>();
  for (let n = 0; n < total; n++) {
    const wait = start + (n * 1000) / perSecond - performance.now();
    if (wait > 1) await sleep(wait);
    while (pending.size >= 256) await Promise.race(pending);
    const p = make(n).finally(() => pending.delete(p));
    pending.add(p);
  }
  await Promise.all(pending);
}

export async function eventLag(bus: "embedded" | "kafka", opts: { events?: number; perSecond?: number } = {}) {
  const events = opts.events ?? 300;
  const perSecond = opts.perSecond ?? 100;
  const kafka = bus === "kafka" ? await startKafka({ dataDir: join(repoRoot, "test-output", `kafka-event-lag-${process.pid}`) }) : undefined;
  const sys = await startTestSystem(`bench_event_lag_${bus}`, { WEBHOOK_ALLOW_PRIVATE_URLS: "true", KAFKA_BROKERS: kafka?.brokers ?? "" });
  const receiver = await startReceiver();
  try {
    const ada = await createUserWithKey(sys, "bench@example.com");
    const forms = createServiceClient(FormsService, sys.env.FORMS_URL);
    const newForm = async (name: string) => {
      const form = await ada.api("POST", "/forms", {
        workspaceId: ada.workspace.id,
        name,
        document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] },
      });
      const hook = await ada.api("POST", "/webhooks", { formId: form.body.id, url: receiver.url, eventTypes: allTypes });
      if (hook.status >= 300) throw new Error(`webhook: ${JSON.stringify(hook.body)}`);
      return form.body.id as string;
    };
    const post = async (formId: string, completed: boolean, n: number) => {
      const res = await fetch(`${sys.url}/f/${formId}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answers: { n }, completed }),
      });
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`response answered ${res.status}`);
    };

    // One published form for response events; one form per form event (each changes once per step).
    const responseForm = await newForm("Responses");
    await forms.setFormStatus({ id: responseForm, status: FormStatus.PUBLISHED });
    const formIds: string[] = [];
    for (let i = 0; i < events; i++) formIds.push(await newForm(`Form ${i}`));
    // Warm-up: connections, topic, first deliveries.
    for (let i = 0; i < 20; i++) await post(responseForm, true, i);
    await eventuallyPasses(async () => receiver.received.length, (n) => n >= 21, 120_000, 100);
    receiver.received.length = 0;

    const steps: [string, (n: number) => Promise<unknown>][] = [
      ["FORM_RESPONSE", (n) => post(responseForm, true, n)],
      ["FORM_RESPONSE_PARTIAL", (n) => post(responseForm, false, n)],
      ["FORM_PUBLISHED", (n) => forms.setFormStatus({ id: formIds[n], status: FormStatus.PUBLISHED })],
      ["FORM_CLOSED", (n) => forms.setFormStatus({ id: formIds[n], status: FormStatus.CLOSED })],
      ["FORM_DELETED", (n) => ada.api("DELETE", `/forms/${formIds[n]}`)],
    ];
    const lag: Record<string, { events: number; p50LagMs: number; p99LagMs: number }> = {};
    for (const [type, make] of steps) {
      await paced(events, perSecond, make);
      const mine = (r: Received[]) => r.filter((g) => g.body.eventType === type);
      await eventuallyPasses(async () => mine(receiver.received).length, (n) => n >= events, 300_000, 100);
      const lags = mine(receiver.received)
        .map((g) => g.at - bornAt(g.body))
        .sort((a, b) => a - b);
      lag[type] = { events: lags.length, p50LagMs: quantile(lags, 0.5), p99LagMs: quantile(lags, 0.99) };
      receiver.received.length = 0;
    }
    return { bus, perSecond, lag };
  } finally {
    await receiver.close();
    await sys.stop();
    await kafka?.stop();
  }
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? Number(args.splice(at, 2)[1]) : undefined;
  };
  const events = option("--events");
  const perSecond = option("--rate");
  const buses = (args.length > 0 ? args : ["embedded", "kafka"]) as ("embedded" | "kafka")[];
  for (const bus of buses) console.log(JSON.stringify(await eventLag(bus, { events, perSecond })));
}
