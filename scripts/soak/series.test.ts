import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seriesSpec, tableWindows, type JudgingSettings } from "./series.ts";

const settings: JudgingSettings = {
  retentionMinutes: 5,
  retentionSafetySeconds: 60,
  partitionSeconds: 60,
  retentionIntervalSeconds: 30,
  keptTables: ["submissions.responses"],
  queueTables: ["submissions.outbox"],
};

describe("seriesSpec", () => {
  it("judges tables from when retention has had its turn: partitions on their peaks, queues on their floor, kept data not at all", () => {
    assert.deepEqual(tableWindows(settings), { judgedFrom: 390, period: 90, queueFloorSeconds: 180 });
    assert.deepEqual(seriesSpec("table_bytes:delivery.deliveries", settings), {
      name: "table_bytes:delivery.deliveries",
      kind: "level",
      unit: "bytes",
      floor: 1024 ** 2,
      judgedFromSeconds: 390,
      envelope: { edge: "peaks", seconds: 90 },
      minWindowSeconds: 180,
    });
    assert.deepEqual(seriesSpec("table_bytes:submissions.outbox", settings).envelope, { edge: "floor", seconds: 180 });
    assert.equal(seriesSpec("table_bytes:submissions.responses", settings).kind, "info");
    // A run recorded before queue tables existed: every table on its peaks.
    assert.deepEqual(seriesSpec("table_bytes:submissions.outbox", { ...settings, queueTables: undefined }).envelope, { edge: "peaks", seconds: 90 });
  });

  it("names each process's, latency's and counter's rule once; the lag of failing or slow receivers is only reported", () => {
    assert.deepEqual(seriesSpec("fds:gateway", settings), { name: "fds:gateway", kind: "level", unit: "descriptors", floor: 8 });
    assert.deepEqual(seriesSpec("delivery_lag_p99_ms", settings), { name: "delivery_lag_p99_ms", kind: "latency", unit: "ms", floor: 10 });
    assert.deepEqual(seriesSpec("delivery_lag_p99_ms:failing", settings), { name: "delivery_lag_p99_ms:failing", kind: "info", unit: "ms" });
    assert.equal(seriesSpec("rows_pruned_total:delivery.attempts", settings).kind, "info");
    assert.throws(() => seriesSpec("mystery_series", settings), /no judging rule for the series mystery_series/);
  });
});
