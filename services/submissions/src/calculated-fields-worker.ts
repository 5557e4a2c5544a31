// A worker thread of calculated-fields-pool.ts: evaluates one response's calculated fields at a time,
// posting each field's value as soon as it is known, so a deadline cut keeps the values before it.
import { parentPort } from "node:worker_threads";
import { evaluateCalculation, type Calculation } from "./calculated-fields.ts";
import type { WorkerMessage } from "./calculated-fields-pool.ts";

const port = parentPort!;
const post = (message: WorkerMessage) => port.postMessage(message);

port.on("message", (calculation: Calculation) => {
  evaluateCalculation(calculation, (value) => post({ value }));
  post({ done: true });
});
post({ ready: true });
