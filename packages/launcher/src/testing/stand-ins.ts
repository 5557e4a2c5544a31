// Stand-ins for the services and the gateway, for tests of the launcher itself: each reports ready over
// IPC and then lives until it is stopped or, when its name is in CRASHING (comma-separated), prints a line
// and exits with code 3 soon after it is ready. A file `ready-delay` beside its entry (see `delayReady`) makes the
// stand-ins started after it was written wait so many milliseconds before they report ready.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { serviceNames } from "@formsvc/platform/config.ts";
import { entryOf } from "../system.ts";

const standIn = `
const { existsSync, readFileSync } = process.getBuiltinModule("node:fs");
const name = process.argv[1].includes("/gateway/") ? "gateway" : process.argv[1].split("/services/")[1].split("/")[0];
const delayFile = process.argv[1].replace(/[^/]+$/, "ready-delay");
setTimeout(() => {
  process.send({ ready: name, port: 0 });
  console.log(name + " up, pid " + process.pid);
  if ((process.env.CRASHING ?? "").split(",").includes(name)) setTimeout(() => { console.log(name + " failing: boom"); process.exit(3); }, 50);
}, existsSync(delayFile) ? Number(readFileSync(delayFile, "utf8")) : 0);
const keepAlive = setInterval(() => {}, 1000);
const stop = () => { clearInterval(keepAlive); process.exit(0); };
process.on("SIGTERM", stop);
process.on("disconnect", stop);
`;

/** Writes a stand-in at every entry file under `root` (see `entryOf`). */
export function writeStandIns(root: string): void {
  for (const name of [...serviceNames, "gateway"]) {
    const entry = entryOf(name, root);
    mkdirSync(dirname(entry), { recursive: true });
    writeFileSync(entry, standIn);
  }
}

/** Makes the stand-in of `name` under `root` started from now on wait `ms` before it reports ready. */
export function delayReady(root: string, name: string, ms: number): void {
  writeFileSync(join(dirname(entryOf(name, root)), "ready-delay"), String(ms));
}
