// A real OTLP/HTTP trace receiver on loopback (what an OpenTelemetry Collector does with JSON): every
// exported span is kept, flattened, for tests to look at by trace id.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** Start and end, in nanoseconds since the epoch. */
  start: number;
  end: number;
}

export const spanKinds = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return Boolean(v.boolValue);
}

const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

export async function startOtlpCollector() {
  const spans: CollectedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || !String(req.headers["content-type"]).startsWith("application/json")) {
        res.writeHead(415).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = JSON.parse((req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("utf8"));
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)["service.name"] ?? "");
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              statusCode: s.status?.code ?? 0,
              start: Number(s.startTimeUnixNano),
              end: Number(s.endTimeUnixNano),
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    trace: (traceId: string) => spans.filter((s) => s.traceId === traceId),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
