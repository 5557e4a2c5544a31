import type { MessageInitShape } from "@bufbuild/protobuf";
import type { CreateUploadRequest, CreateUploadRequestSchema, UploadHeader } from "@formsvc/proto/submissions/v1/submissions_pb.js";

/** Bytes per chunk of a CreateUpload stream. */
export const uploadChunkBytes = 256 * 1024;

/**
 * The messages of a CreateUpload call for a file held in `content`: its header, then its bytes in
 * chunks (views into `content`, never copies).
 */
export async function* uploadRequests(
  file: { formId: string; name: string; contentType: string },
  content: Uint8Array,
): AsyncGenerator<MessageInitShape<typeof CreateUploadRequestSchema>> {
  yield { part: { case: "header", value: { ...file, size: BigInt(content.length) } } };
  for (let at = 0; at < content.length; at += uploadChunkBytes) {
    yield { part: { case: "chunk", value: content.subarray(at, at + uploadChunkBytes) } };
  }
}

/** A whole CreateUpload stream gathered: its header's fields and all its bytes (for fakes in tests). */
export async function receiveUpload(requests: AsyncIterable<CreateUploadRequest>): Promise<{ formId: string; name: string; contentType: string; content: Buffer }> {
  let header: UploadHeader | undefined;
  const chunks: Uint8Array[] = [];
  for await (const request of requests) {
    if (request.part.case === "header") header = request.part.value;
    else if (request.part.case === "chunk") chunks.push(request.part.value);
  }
  if (!header) throw new Error("a CreateUpload stream without its header");
  return { formId: header.formId, name: header.name, contentType: header.contentType, content: Buffer.concat(chunks) };
}
