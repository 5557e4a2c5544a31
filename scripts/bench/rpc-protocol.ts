// The services' own calls in the gRPC protocol (RPC_PROTOCOL=grpc, "off") and in the Connect protocol
// (binary, over the same HTTP/2 connection, "on"), interleaved over rounds: ingest (POST /f/:id/responses,
// 50 connections) and the API read (GET /api/v1/forms/:id, 64 connections), req/s, p99 and CPU per
// request of every process. `node scripts/bench/rpc-protocol.ts [--rounds N] [--seconds S]`.
import { startTestSystem } from "../../tests/support/system.ts";
import { apiReadTarget } from "./api-read.ts";
import { cpuMeter, load, servicesCpu } from "./common.ts";
import { loadIngest } from "./ingest.ts";
import { numberArg, switchAB } from "./switch-ab.ts";

type Figures = { ingestPerSecond: number; ingestP99: number; ingestCpuMs: number; readPerSecond: number; readP99: number; readCpuMs: number };

export async function rpcProtocol(opts: { rounds?: number; seconds?: number } = {}) {
  const seconds = opts.seconds ?? 8;
  const figures: Record<"on" | "off", Figures[]> = { on: [], off: [] };
  const result = await switchAB(opts.rounds ?? 2, async (value) => {
    const sys = await startTestSystem(`bench_rpc_protocol_${value}`, { RPC_PROTOCOL: value === "on" ? "connect" : "grpc" });
    try {
      const { system: ingest } = await loadIngest(sys, 50, seconds);
      const { path, headers } = await apiReadTarget(sys, "reader@example.com");
      const url = sys.url + path;
      await load({ url, headers, connections: 64, duration: 2 });
      const cpu = cpuMeter(sys);
      const read = await load({ url, headers, connections: 64, duration: seconds });
      figures[value].push({
        ingestPerSecond: ingest.requestsPerSecond,
        ingestP99: ingest.p99ms,
        ingestCpuMs: servicesCpu(ingest.cpuMsPerRequest),
        readPerSecond: read.requestsPerSecond,
        readP99: read.p99ms,
        readCpuMs: servicesCpu(cpu.perUnit(read.total)),
      });
      return ingest.requestsPerSecond;
    } finally {
      await sys.stop();
    }
  });
  return { rounds: result.rounds, ingestRatioOnToOff: result.ratioOnToOff, figures };
}

if (import.meta.main) {
  console.log(JSON.stringify(await rpcProtocol({ rounds: numberArg("--rounds", 2), seconds: numberArg("--seconds", 8) }), null, 2));
}
