import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { traceparentOf, inSpan, tracingConfigured } from "./tracing.ts";
import { samplerFromEnv } from "./tracing-sdk.ts";

describe("tracing", () => {
  it("is off unless an OTLP endpoint is configured", () => {
    assert.equal(tracingConfigured({}), false);
    assert.equal(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "" }), false);
    assert.equal(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }), true);
    assert.equal(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" }), true);
    assert.equal(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" }), false);
  });

  it("while off, runs spans' work and stores no trace context", async () => {
    const answer = await inSpan("work", {}, async (span) => {
      assert.equal(span.isRecording(), false);
      return traceparentOf();
    });
    assert.equal(answer, null);
    await assert.rejects(inSpan("failing", {}, async () => Promise.reject(new Error("boom"))), /boom/);
  });

  it("takes the OpenTelemetry sampler names and refuses others with a clear message", () => {
    assert.match(samplerFromEnv({}).toString(), /ParentBased/);
    assert.match(samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" }).toString(), /0\.25/);
    assert.throws(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: "sometimes" }), /OTEL_TRACES_SAMPLER must be one of always_on, always_off/);
    assert.throws(() => samplerFromEnv({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }), /ratio from 0 to 1/);
  });
});
