// Files: a respondent's upload (CreateUpload: bytes streamed to the store within the quotas, then its row),
// a file of a response served (ReadFile), and what a form's files take (GetFormStorage).
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { maxUploadBytes } from "@formsvc/form-document/block-types";
import { requireCaller } from "@formsvc/platform/caller.ts";
import { qualifiedTable } from "@formsvc/platform/database.ts";
import { newId } from "@formsvc/platform/ids.ts";
import { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { checkStorageQuota, storageLeft } from "../files/storage-quota.ts";
import { readUploadStream, type ByteLimit } from "../files/upload-stream.ts";
import { normalizeContentType, sanitizeFileName } from "../files/uploads.ts";
import { UploadEntity } from "../entities/index.ts";
import type { SubmissionsContext } from "./context.ts";
import { fileRef } from "./response-events.ts";

const fileNotFound = () => new ConnectError("file not found", Code.NotFound);
/** How long a presigned download URL of the object store stays valid (ReadFile): 5 minutes. */
const downloadUrlSeconds = 5 * 60;

export function fileHandlers(c: SubmissionsContext): Pick<ServiceImpl<typeof SubmissionsService>, "createUpload" | "readFile" | "getFormStorage"> {
  const { orm, files, quotas, now, openForm, checkCallerForm, removeBlobs } = c;
  return {
    async createUpload(requests) {
      const upload = await readUploadStream(requests);
      const form = await openForm(upload.header.formId);
      const tooLarge: ByteLimit = {
        bytes: maxUploadBytes,
        exceeded: () => new ConnectError(`file: is larger than ${maxUploadBytes / (1024 * 1024)} MiB`, Code.InvalidArgument),
      };
      if (upload.announced !== undefined && upload.announced > maxUploadBytes) throw tooLarge.exceeded();
      const id = newId();
      const name = sanitizeFileName(upload.header.name);
      const contentType = normalizeContentType(upload.header.contentType);
      const owner = { formId: form.id, workspaceId: form.workspaceId };
      // A full quota refuses before the bytes are stored: an announced size at once, bytes not announced
      // as soon as they pass what is left. The count under the lock below is the one that binds.
      const left = await storageLeft(orm.em.fork(), orm, owner, quotas);
      if (upload.announced !== undefined && upload.announced > left.bytes) throw left.exceeded();
      // Bytes first, passed on to the store as they come: a row never points at nothing. A put cut short
      // (past a limit, fewer or more bytes than announced, a sender gone) leaves nothing; a failed insert
      // removes the bytes again.
      await files.put(id, upload.chunks([tooLarge, left]), { name, contentType });
      const size = upload.received();
      try {
        await orm.em.fork().transactional(async (em) => {
          await checkStorageQuota(em, orm, { ...owner, size }, quotas, { lock: true });
          em.create(UploadEntity, {
            id,
            formId: form.id,
            workspaceId: form.workspaceId,
            responseId: null,
            name,
            contentType,
            size,
            storageKey: id,
            createdAt: now(),
          });
        });
      } catch (err) {
        await removeBlobs([id]);
        throw err;
      }
      return { uploadId: id, name, size: BigInt(size), contentType };
    },

    async readFile(req) {
      // Only files of a response are served: an upload nobody submitted, or one whose response was
      // deleted, is not found.
      const upload = req.fileId
        ? await orm.em.fork().findOne(UploadEntity, { id: req.fileId, responseId: { $ne: null } })
        : null;
      if (!upload) throw fileNotFound();
      const file = { ...fileRef(upload), size: BigInt(upload.size) };
      if (files.downloadUrl) {
        // The row was there a moment ago; a deletion now removes the object, and the URL finds nothing.
        return { file, downloadUrl: await files.downloadUrl(upload.storageKey, upload, downloadUrlSeconds) };
      }
      const content = await files.get(upload.storageKey);
      // Gone between the two reads: the submission was deleted meanwhile.
      if (!content) throw fileNotFound();
      return { file, content };
    },

    async getFormStorage(req, ctx) {
      await checkCallerForm(requireCaller(ctx), req.formId);
      const table = qualifiedTable(orm, UploadEntity);
      const [row] = (await orm.em.fork().execute(
        `select count(*)::text as "files", coalesce(sum("size"), 0)::text as "bytes" from ${table}
          where "form_id" = ? and "response_id" is not null`,
        [req.formId],
      )) as { files: string; bytes: string }[];
      return { files: BigInt(row.files), bytes: BigInt(row.bytes), quotaBytes: BigInt(quotas.formQuotaBytes) };
    },
  };
}
