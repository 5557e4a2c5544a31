import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { compileCacheDir, repoRoot } from "@formsvc/launcher/system.ts";
import { eventually } from "./support/receiver.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// What keeps a self-hoster's idle system small (BENCHMARKS.md, "Memory"): each process runs with Node's compile
// cache, so from the second start on none loads the TypeScript stripper, and each gives back the heap that
// start-up grew once it has been idle for a moment.

describe("an idle system", () => {
  let sys: TestSystem;
  before(async () => {
    sys = await startTestSystem("idle_memory", { LOG_LEVEL: "debug", NODE_COMPILE_CACHE: "" });
  });
  after(() => sys?.stop());

  it("runs every process with Node's compile cache, kept under node_modules/.cache", () => {
    for (const [name, child] of sys.system.processes) {
      const environ = readFileSync(`/proc/${child.pid}/environ`, "utf8").split("\0");
      assert.ok(environ.includes(`NODE_COMPILE_CACHE=${compileCacheDir()}`), `${name} runs with the compile cache`);
    }
    // Node files each version's entries under a directory of its own.
    const entries = readdirSync(compileCacheDir(), { recursive: true });
    assert.ok(entries.length > 6, `the cache holds entries: ${entries.length}`);
  });

  it("gives back each process's spare heap once it is idle, and says so in its log", async () => {
    const logDir = join(repoRoot, "test-output", sys.databaseUrl.split("/").pop()!);
    for (const name of sys.system.processes.keys()) {
      const line = await eventually(
        async () => readFileSync(join(logDir, `${name}.log`), "utf8").split("\n").find((l) => l.includes('"msg":"idle: spare heap released"')),
        (found) => found !== undefined,
        30_000,
        200,
      );
      const release = JSON.parse(line!) as { heapBeforeMiB: number; heapAfterMiB: number };
      assert.ok(release.heapAfterMiB < release.heapBeforeMiB, `${name}: ${line}`);
    }
  });
});
