import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { compileCacheDir, entryOf, repoRoot } from "@formsvc/launcher/system.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startTestSystem, type TestSystem } from "./support/system.ts";

// What keeps a self-hoster's idle system small (BENCHMARKS.md, "Memory"): each process runs with Node's compile
// cache, so from the second start on none loads the TypeScript stripper; with one malloc arena; each gives
// back the heap that start-up grew once it has been idle for a moment; and none loads what only some
// configurations or some requests need.

describe("an idle system", () => {
  let sys: TestSystem;
  before(async () => {
    sys = await startTestSystem("idle_memory", { LOG_LEVEL: "debug", NODE_COMPILE_CACHE: "" });
  });
  after(() => sys?.stop());

  it("runs every process with Node's compile cache, kept under node_modules/.cache, and one malloc arena", () => {
    for (const [name, child] of sys.system.processes) {
      const environ = readFileSync(`/proc/${child.pid}/environ`, "utf8").split("\0");
      assert.ok(environ.includes(`NODE_COMPILE_CACHE=${compileCacheDir()}`), `${name} runs with the compile cache`);
      assert.ok(environ.includes(`MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX || 1}`), `${name} runs with one malloc arena`);
    }
    // Node files each version's entries under a directory of its own.
    const entries = readdirSync(compileCacheDir(), { recursive: true });
    assert.ok(entries.length > 6, `the cache holds entries: ${entries.length}`);
  });

  it("gives back the processes' spare heap once they are idle, each saying so in its log", async () => {
    const logDir = join(repoRoot, "test-output", sys.databaseUrl.split("/").pop()!);
    const releases: { name: string; heapBeforeMiB: number; heapAfterMiB: number }[] = [];
    for (const name of sys.system.processes.keys()) {
      const line = await eventuallyPasses(
        async () => readFileSync(join(logDir, `${name}.log`), "utf8").split("\n").find((l) => l.includes('"msg":"idle: spare heap released"')),
        (found) => found !== undefined,
        30_000,
        200,
      );
      releases.push({ name, ...(JSON.parse(line!) as { heapBeforeMiB: number; heapAfterMiB: number }) });
    }
    // A process whose heap was already compact has nothing to give back (a fresh-clone run: submissions 33 ->
    // 33 MiB, read in whole MiB), so each heap must not grow and together they must shrink.
    for (const r of releases) assert.ok(r.heapAfterMiB <= r.heapBeforeMiB, JSON.stringify(r));
    const total = (key: "heapBeforeMiB" | "heapAfterMiB") => releases.reduce((sum, r) => sum + r[key], 0);
    assert.ok(total("heapAfterMiB") < total("heapBeforeMiB"), JSON.stringify(releases));
  });
});

/**
 * Every module `name`'s entry imports before any of its code runs (its static imports, all resolved and
 * linked first): the entry is started with a resolve hook that writes each module it resolves, and a
 * configuration it refuses at once.
 */
function staticImportsOf(name: string): string[] {
  const hook = `import { registerHooks } from "node:module";
    registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); process.stdout.write("resolved " + r.url + "\\n"); return r; } });`;
  const run = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(hook)}`, entryOf(name)], {
    env: { ...process.env, NODE_TEST_CONTEXT: "", PORT: "not-a-port", DATABASE_URL: "" },
    encoding: "utf8",
    // Generous: a run cut short by its timeout lists only the imports resolved so far, which once read as a
    // module not loaded (CI, two test files at a time).
    timeout: 300_000,
  });
  assert.equal(run.error, undefined, `${name} ran to its refusal of the configuration: ${run.error}`);
  const resolved = run.stdout.split("\n").filter((line) => line.startsWith("resolved ")).map((line) => line.slice(9));
  assert.ok(resolved.length > 50, `${name} resolved its imports: ${run.stderr.slice(-500)}`);
  return resolved;
}

describe("what a process loads", () => {
  it("the gateway, which owns no database: neither the ORM nor the GeoIP tables (read in on the first public address), nor multer (on the first upload), nor openid-client (with OIDC_ISSUER, at the first sign-in)", () => {
    const modules = staticImportsOf("gateway");
    for (const unneeded of ["/@mikro-orm/", "/kysely/", "/pg/", "/geoip-country/", "/nodemailer/", "/multer/", "/openid-client/"]) {
      assert.deepEqual(modules.filter((url) => url.includes(unneeded)), [], `the gateway does not load ${unneeded}`);
    }
  });

  it("delivery and submissions: none of the form document's schemas or CEL parser, which only forms and the gateway check documents with", () => {
    for (const name of ["delivery", "submissions"]) {
      const modules = staticImportsOf(name);
      assert.ok(modules.some((url) => url.includes("/packages/form-document/")), `${name} loads the form document's rules`);
      assert.deepEqual(modules.filter((url) => url.includes("/@bufbuild/cel/") || url.endsWith("/form-document/src/schema.ts")), [], `${name} loads no document schema, no CEL`);
    }
    assert.deepEqual(staticImportsOf("delivery").filter((url) => url.includes("/zod/")), [], "delivery loads no zod");
  });

  it("a service that sends mail: nodemailer only once it has mail to send", () => {
    const modules = staticImportsOf("identity");
    assert.ok(modules.some((url) => url.includes("/@mikro-orm/")), "identity loads its ORM");
    assert.deepEqual(modules.filter((url) => url.includes("/nodemailer/")), []);
  });
});
