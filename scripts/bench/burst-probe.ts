// Probe (not part of npm run bench): where a delivered response's CPU goes on the whole machine. Bursts of
// responses (public POSTs at 32 connections, each delivered to a quick receiver), and for each: deliveries per
// second, the machine's idle share, and CPU ms per delivered response of each process, of Postgres (all its
// backends) and of this process (the clients and the receiver).
// `node scripts/bench/burst-probe.ts [--burst N] [--bursts K]`.
import { readFileSync, readdirSync } from "node:fs";
import { startReceiver } from "../../tests/support/receiver.ts";
import { startTestSystem } from "../../tests/support/system.ts";
import { lagStats, measuredBurst, warmHookedForm } from "./delivery.ts";
import { numberArg } from "./switch-ab.ts";

const burst = numberArg("--burst", 3000);
const bursts = numberArg("--bursts", 2);

/** The machine's jiffies: idle (idle + iowait) and all. */
function machineTicks() {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].split(/\s+/).slice(1).map(Number);
  return { idle: fields[3] + fields[4], total: fields.reduce((a, b) => a + b, 0) };
}

/** User and system jiffies of every postgres process. */
function postgresTicks(): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks;
}

const sys = await startTestSystem("burst_probe", { WEBHOOK_ALLOW_PRIVATE_URLS: "true" });
const receiver = await startReceiver();
try {
  const formId = await warmHookedForm(sys, receiver);
  for (let i = 0; i < bursts; i++) {
    const [machine, postgres, self] = [machineTicks(), postgresTicks(), process.cpuUsage()];
    const measured = await measuredBurst(sys, receiver, formId, burst);
    const [machineAfter, postgresAfter, selfUsed] = [machineTicks(), postgresTicks(), process.cpuUsage(self)];
    receiver.received.length = 0;
    const msPer = (ms: number) => Math.round((100 * ms) / burst) / 100;
    console.log(
      JSON.stringify({
        deliveriesPerSecond: lagStats(measured.received, measured.sentAt).deliveriesPerSecond,
        idlePercent: Math.round((100 * (machineAfter.idle - machine.idle)) / (machineAfter.total - machine.total)),
        postgresMsPerDelivery: msPer((postgresAfter - postgres) * 10),
        benchMsPerDelivery: msPer((selfUsed.user + selfUsed.system) / 1000),
        cpuMsPerDelivery: measured.cpuMsPerDelivery,
      }),
    );
  }
} finally {
  await receiver.close();
  await sys.stop();
}
