import { Code, ConnectError } from "@connectrpc/connect";
import type { CreateUploadRequest, UploadHeader } from "@formsvc/proto/submissions/v1/submissions_pb.js";

/** A bound on the bytes of an upload and the error past it. */
export interface ByteLimit {
  bytes: number;
  exceeded: () => ConnectError;
}

export interface UploadStream {
  header: UploadHeader;
  /** The bytes the header announced; undefined when it says 0 (not known: the sender passes bytes on as they come). */
  announced: number | undefined;
  /**
   * The bytes, read once. Throws (and so the store's put fails) past any of `limits`, when the bytes come
   * to more or less than announced, or when there are none.
   */
  chunks(limits: ByteLimit[]): AsyncIterable<Uint8Array>;
  /** The bytes read so far: the file's size once `chunks` is done. */
  received(): number;
}

/** Splits a CreateUpload stream into its header and its bytes. */
export async function readUploadStream(requests: AsyncIterable<CreateUploadRequest>): Promise<UploadStream> {
  const iterator = requests[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done || first.value.part.case !== "header") throw new ConnectError("the upload must begin with its header", Code.InvalidArgument);
  const header = first.value.part.value;
  const announced = Number(header.size) > 0 ? Number(header.size) : undefined;
  let received = 0;
  async function* chunks(limits: ByteLimit[]): AsyncGenerator<Uint8Array> {
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      if (next.value.part.case !== "chunk") throw new ConnectError("the upload has a second header", Code.InvalidArgument);
      received += next.value.part.value.length;
      if (announced !== undefined && received > announced) throw new ConnectError(`file: more than the ${announced} bytes announced`, Code.InvalidArgument);
      const passed = limits.find((limit) => received > limit.bytes);
      if (passed) throw passed.exceeded();
      yield next.value.part.value;
    }
    if (announced !== undefined && received !== announced) throw new ConnectError(`file: ${received} bytes of the ${announced} announced`, Code.InvalidArgument);
    if (received === 0) throw new ConnectError("file: is empty", Code.InvalidArgument);
  }
  return { header, announced, chunks, received: () => received };
}
