import { readFileSync } from "node:fs";
import { createUserWithKey, startTestSystem } from "../../tests/support/system.ts";
import { load } from "./common.ts";
const cpu = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" "); return (Number(f[11]) + Number(f[12])) * 10; };
const sys = await startTestSystem("bench_probe");
try {
  const ada = await createUserWithKey(sys, "bench@example.com");
  const form = await ada.api("POST", "/forms", { workspaceId: ada.workspace.id, name: "Bench" });
  await load({ url: `${sys.url}/api/v1/forms/${form.body.id}`, headers: { authorization: `Bearer ${ada.key}` }, connections: 4, amount: 200 });
  const before = new Map([...sys.system.processes].map(([n, c]) => [n, cpu(c.pid!)]));
  const N = 500;
  const r = await load({ url: `${sys.url}/api/v1/forms/${form.body.id}`, headers: { authorization: `Bearer ${ada.key}` }, connections: 8, amount: N });
  console.log(JSON.stringify(r));
  for (const [n, c] of sys.system.processes) console.log(n, ((cpu(c.pid!) - before.get(n)!) / N).toFixed(2), "ms CPU/req");
} finally { await sys.stop(); }
