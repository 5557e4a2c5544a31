import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseMetrics, processStats } from "./probes.ts";

describe("parseMetrics", () => {
  it("reads names, labels and values of a Prometheus text exposition, skipping comments", () => {
    const text = [
      "# HELP nodejs_eventloop_lag_p99_seconds The 99th percentile of the recorded event loop delays.",
      "# TYPE nodejs_eventloop_lag_p99_seconds gauge",
      'nodejs_eventloop_lag_p99_seconds{service="delivery"} 0.012058623',
      'table_bytes{table="delivery.deliveries",service="delivery"} 1261568',
      'odd{note="say \\"hi\\", a\\\\b\\nc"} +Inf',
      "process_open_fds 31 1700000000000",
      "",
    ].join("\n");
    assert.deepEqual(parseMetrics(text), [
      { name: "nodejs_eventloop_lag_p99_seconds", labels: { service: "delivery" }, value: 0.012058623 },
      { name: "table_bytes", labels: { table: "delivery.deliveries", service: "delivery" }, value: 1261568 },
      { name: "odd", labels: { note: 'say "hi", a\\b\nc' }, value: Infinity },
      { name: "process_open_fds", labels: {}, value: 31 },
    ]);
  });
});

describe("processStats", () => {
  it("reads this process's RSS and descriptors, and NaN for none", () => {
    const own = processStats(process.pid);
    assert.ok(own.rssMiB > 10 && own.rssMiB < 4096, String(own.rssMiB));
    assert.ok(Number.isInteger(own.fds) && own.fds >= 3, String(own.fds));
    assert.deepEqual(processStats(undefined), { rssMiB: NaN, fds: NaN });
  });
});
