import { readFileSync, readdirSync } from "node:fs";
import { startReceiver } from "../../tests/support/receiver.ts";
import { startTestSystem } from "../../tests/support/system.ts";
import { measuredBurst, warmHookedForm, lagStats } from "./delivery.ts";
const ticks = () => { const f = readFileSync("/proc/stat", "utf8").split("\n")[0].split(/\s+/).slice(1).map(Number); return { idle: f[3] + f[4], total: f.reduce((a, b) => a + b, 0), sirq: f[6] }; };
const pgTicks = () => { let t = 0; for (const p of readdirSync("/proc")) { if (!/^\d+$/.test(p)) continue; try { const s = readFileSync(`/proc/${p}/stat`, "utf8"); if (!s.includes("(postgres)")) continue; const f = s.slice(s.lastIndexOf(")") + 2).split(" "); t += Number(f[11]) + Number(f[12]); } catch {} } return t; };
const sys = await startTestSystem("burst_probe", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
const receiver = await startReceiver();
try {
  const formId = await warmHookedForm(sys, receiver);
  for (let i = 0; i < 2; i++) {
    const a = ticks(), pg0 = pgTicks(), me0 = process.cpuUsage();
    const r = await measuredBurst(sys, receiver, formId, 3000);
    const b = ticks(), pg1 = pgTicks(), me1 = process.cpuUsage(me0);
    receiver.received.length = 0;
    const n = 3000, total = b.total - a.total;
    const s = lagStats(r.received, r.sentAt);
    console.log(JSON.stringify({ perSecond: s.deliveriesPerSecond, idlePct: Math.round((100 * (b.idle - a.idle)) / total), softirqPct: Math.round((100 * (b.sirq - a.sirq)) / total), pgMsPer: ((pg1 - pg0) * 10 / n).toFixed(2), benchMsPer: ((me1.user + me1.system) / 1000 / n).toFixed(2), cpu: r.cpuMsPerDelivery }));
  }
} finally {
  await receiver.close();
  await sys.stop();
}
