// Uploads at scale: 20 clients each upload 20 MiB to a hosted form at once, on the local store and on
// S3 (S3Mock on loopback). Prints throughput (MiB/s received and stored) and the peak RSS of submissions
// (and of the gateway) while they run. One file may be at most 10 MiB (maxUploadBytes), so each client
// sends its 20 MiB as two 10 MiB files, one after the other.
//
//   node scripts/bench/uploads.ts [--clients 20] [--mib-per-client 20]
import { randomBytes } from "node:crypto";
import { maxUploadBytes } from "@formsvc/form-document";
import { fileStores, type FileStoreName } from "../../tests/support/file-stores.ts";
import { createUserWithKey, startTestSystem, type TestSystem } from "../../tests/support/system.ts";
import { rssMiB } from "./common.ts";

const MiB = 1024 * 1024;

/** Samples a process's RSS every 20 ms until stopped; the peak in MiB. */
function peakRss(pid: number | undefined) {
  let peak = rssMiB(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
  return { stop: () => (clearInterval(timer), Math.max(peak, rssMiB(pid))) };
}

async function uploadOnce(sys: TestSystem, formId: string, content: Uint8Array<ArrayBuffer>, name: string): Promise<void> {
  const body = new FormData();
  body.set("file", new Blob([content], { type: "application/octet-stream" }), name);
  const res = await fetch(`${sys.url}/f/${formId}/uploads`, { method: "POST", body });
  if (res.status !== 200) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`);
}

export async function benchUploads(store: FileStoreName, clients: number, mibPerClient: number) {
  const files = await fileStores[store]();
  const sys = await startTestSystem(`bench_uploads_${store}`, files.env);
  try {
    const owner = await createUserWithKey(sys, "bench-uploads@example.com");
    const form = await owner.api("POST", "/forms", {
      workspaceId: owner.workspace.id,
      name: "Uploads",
      document: { blocks: [{ id: "f", key: "f", type: "FILE", question: "File" }] },
    });
    await sys.cli("form:publish", "--id", form.body.id);
    const fileBytes = Math.min(maxUploadBytes, mibPerClient * MiB);
    const perClient = Math.ceil((mibPerClient * MiB) / fileBytes);
    // One buffer of random bytes per client, made before the clock starts.
    const contents = Array.from({ length: clients }, () => new Uint8Array(randomBytes(fileBytes)));
    await uploadOnce(sys, form.body.id, contents[0].subarray(0, 1024), "warm-up.bin");

    const idleRssMiB = { submissions: rssMiB(sys.system.processes.get("submissions")?.pid), gateway: rssMiB(sys.system.processes.get("gateway")?.pid) };
    const submissions = peakRss(sys.system.processes.get("submissions")?.pid);
    const gateway = peakRss(sys.system.processes.get("gateway")?.pid);
    const started = performance.now();
    await Promise.all(
      contents.map(async (content, c) => {
        for (let i = 0; i < perClient; i++) await uploadOnce(sys, form.body.id, content, `client-${c}-${i}.bin`);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const totalMiB = (clients * perClient * fileBytes) / MiB;
    return {
      store,
      clients,
      files: clients * perClient,
      fileMiB: fileBytes / MiB,
      totalMiB,
      seconds: Math.round(seconds * 100) / 100,
      mibPerSecond: Math.round((totalMiB / seconds) * 10) / 10,
      peakRssMiB: { submissions: submissions.stop(), gateway: gateway.stop() },
      idleRssMiB,
    };
  } finally {
    await sys.stop();
    await files.stop();
  }
}

if (import.meta.main) {
  const arg = (flag: string, fallback: number) => {
    const i = process.argv.indexOf(flag);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const clients = arg("--clients", 20);
  const mib = arg("--mib-per-client", 20);
  for (const store of ["local", "s3"] as const) {
    console.log(`uploads ${JSON.stringify(await benchUploads(store, clients, mib))}`);
  }
}
