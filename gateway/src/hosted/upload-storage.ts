// Multer storage for hosted-form uploads that passes the file on to submissions (CreateUpload) as it
// arrives, so the gateway holds a few chunks of a file, never the whole of it, and a slow store slows
// the client (HTTP/2 flow control back to the socket). The call opens when the file part starts; its end
// is held back until the route decides: `store` ends it (submissions keeps the file), `discard` cuts it
// short (submissions keeps nothing). Multer's _removeFile discards, so a body that fails after its file
// part (a second file, a bad trailer, a client gone) leaves nothing stored.
import { createHash } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { Request } from "express";
import type multer from "multer";
import type { CreateUploadResponse, SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";

/** What multer puts on `req.file` besides the part's name and type. */
export interface StreamedFile {
  /** The file's bytes, all received. */
  size: number;
  /** SHA-256 of those bytes (base64url): what tells a repeat of an upload from another file. */
  sha256: string;
  /** Ends the call: submissions stores the file. Its answer, or the error the call failed with. */
  store(): Promise<CreateUploadResponse>;
  /** Cuts the call short, so nothing is stored; settles once the call has ended. */
  discard(reason: Error): Promise<void>;
}

export interface StreamingUploadStorage {
  submissions: Client<typeof SubmissionsService>;
  /** The header's fields for a file part; throws (an HttpError) when the part cannot be one. */
  headerOf: (req: Request, file: Express.Multer.File) => { formId: string; name: string; contentType: string };
  maxBytes: number;
  /** The error for a file past `maxBytes` (multer answers its own LIMIT_FILE_SIZE when it notices first). */
  tooLarge: () => Error;
}

export function streamingUploadStorage({ submissions, headerOf, maxBytes, tooLarge }: StreamingUploadStorage): multer.StorageEngine {
  return {
    _handleFile(req, file, cb) {
      let header: ReturnType<typeof headerOf>;
      try {
        header = headerOf(req, file);
      } catch (err) {
        file.stream.resume();
        return cb(err);
      }
      let decide!: { store: () => void; discard: (reason: Error) => void };
      const decided = new Promise<void>((store, discard) => (decide = { store, discard }));
      decided.catch(() => {});
      let size = 0;
      const digest = createHash("sha256");
      let received = false;
      // Why this side cut the call, when it did: the call itself only reports a cancelled stream.
      let cutBy: unknown;

      async function* requests() {
        try {
          // Size 0: not known yet; submissions counts the bytes and bounds them as they come.
          yield { part: { case: "header" as const, value: { ...header, size: 0n } } };
          for await (const chunk of file.stream as AsyncIterable<Buffer>) {
            size += chunk.length;
            if (size > maxBytes) throw tooLarge();
            digest.update(chunk);
            yield { part: { case: "chunk" as const, value: chunk } };
          }
          // busboy ends a file early at its size limit: that is not the whole file.
          if ((file.stream as { truncated?: boolean }).truncated) throw tooLarge();
          received = true;
          const done: StreamedFile = { size, sha256: digest.digest("base64url"), store, discard };
          cb(null, done as Partial<Express.Multer.File>);
          await decided;
        } catch (err) {
          cutBy = err;
          throw err;
        }
      }

      const call = submissions.createUpload(requests()).then(
        (response) => ({ response }),
        (error: unknown) => ({ error: cutBy ?? error }),
      );
      void call.then((outcome) => {
        if (received) return;
        // Ended before the whole file came (submissions refused it, or the body broke off): stop reading it.
        file.stream.destroy();
        cb("error" in outcome ? outcome.error : new Error("the upload ended before its file"));
      });

      async function store(): Promise<CreateUploadResponse> {
        decide.store();
        const outcome = await call;
        if ("error" in outcome) throw outcome.error;
        return outcome.response;
      }
      async function discard(reason: Error): Promise<void> {
        decide.discard(reason);
        await call;
      }
    },

    _removeFile(_req, file, cb) {
      void (file as unknown as StreamedFile).discard(new Error("the upload was not completed")).then(() => cb(null));
    },
  };
}
