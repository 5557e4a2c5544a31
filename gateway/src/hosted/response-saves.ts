// Respondents' saves that arrive in one turn of the event loop go to submissions together, in one SaveResponses
// call, and each is answered as soon as its own result comes back (submissions streams them as they finish): under
// load one call carries many saves, so the per-call work on both sides (an HTTP/2 stream, its headers, its signals)
// is paid once for them all. A save that comes alone goes as a SaveResponse of its own. Each save keeps its
// request id and trace; a refusal comes back as the ConnectError a call of its own would have failed with.
import { AsyncLocalStorage } from "node:async_hooks";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { maxSavesPerCall } from "@formsvc/platform/caller.ts";
import { currentRequestId } from "@formsvc/platform/request-context.ts";
import { connectErrorOf } from "@formsvc/platform/rpc-error-items.ts";
import { traceparentOf } from "@formsvc/platform/tracing.ts";
import type { SaveResponseRequestSchema, SaveResponseResponse, SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";

type Save = MessageInitShape<typeof SaveResponseRequestSchema>;

interface QueuedSave {
  save: Save;
  /** Runs a function in the context of the request that queued the save (its request id, its trace). */
  inItsContext: <R>(fn: () => R) => R;
  resolve(saved: SaveResponseResponse): void;
  reject(err: unknown): void;
}

export type SaveResponseCall = (save: Save) => Promise<SaveResponseResponse>;

export function responseSaver(submissions: Pick<Client<typeof SubmissionsService>, "saveResponse" | "saveResponses">): SaveResponseCall {
  let queued: QueuedSave[] = [];

  async function send(batch: QueuedSave[]): Promise<void> {
    if (batch.length === 1) {
      const [one] = batch;
      return one.inItsContext(() => submissions.saveResponse(one.save)).then(one.resolve, one.reject);
    }
    const items = batch.map(({ save, inItsContext }) => inItsContext(() => ({ save, requestId: currentRequestId() ?? "", traceParent: traceparentOf() ?? "" })));
    const answered = new Set<number>();
    try {
      for await (const result of submissions.saveResponses({ items })) {
        const waiting = batch[result.index];
        if (!waiting || answered.has(result.index)) continue;
        answered.add(result.index);
        if (result.outcome.case === "saved") waiting.resolve(result.outcome.value);
        else waiting.reject(result.outcome.case === "error" ? connectErrorOf(result.outcome.value) : new ConnectError("submissions gave no outcome", Code.Internal));
      }
      if (answered.size < batch.length) throw new ConnectError("submissions ended the call before answering every save", Code.Internal);
    } catch (err) {
      batch.forEach((waiting, index) => answered.has(index) || waiting.reject(err));
    }
  }

  function flush(): void {
    const batch = queued;
    queued = [];
    for (let at = 0; at < batch.length; at += maxSavesPerCall) void send(batch.slice(at, at + maxSavesPerCall));
  }

  return (save) =>
    new Promise((resolve, reject) => {
      if (queued.length === 0) setImmediate(flush);
      queued.push({ save, inItsContext: AsyncLocalStorage.snapshot(), resolve, reject });
    });
}
