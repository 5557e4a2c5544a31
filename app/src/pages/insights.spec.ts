import { describe, expect, it } from "vitest";
import { formatDuration } from "./Insights.tsx";

describe("formatDuration", () => {
  it("says seconds, minutes and hours as a person reads them", () => {
    expect([null, 0, 42, 60, 84, 3_600, 5_430].map(formatDuration)).toEqual(["—", "0 s", "42 s", "1 min", "1 min 24 s", "1 h", "1 h 31 min"]);
  });
});
