// Probe (not part of npm run bench): each process's memory when idle, as RSS and its parts.
import { startTestSystem } from "../../tests/support/system.ts";
import { procMemory, sleep } from "./common.ts";

const sys = await startTestSystem("memory_probe", { LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" });
try {
  await sleep(Number(process.env.IDLE_MS ?? 8000));
  const rows: Record<string, Record<string, number>> = {};
  const total = { rss: 0, anon: 0, file: 0, pss: 0 };
  for (const [name, child] of sys.system.processes) {
    const p = procMemory(child.pid);
    rows[name] = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Math.round(v)]));
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += p[k];
  }
  console.table(rows);
  console.log("total", Object.fromEntries(Object.entries(total).map(([k, v]) => [k, Math.round(v)])));
} finally {
  await sys.stop();
}
