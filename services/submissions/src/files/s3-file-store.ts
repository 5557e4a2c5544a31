import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { Readable } from "node:stream";
import type { S3Settings } from "@formsvc/platform/config.ts";
import { assertStorageKey, attachmentDisposition, type FileStore } from "./file-store.ts";

/** Size of each part of a multipart upload (S3's smallest); a smaller file is one PUT. */
const partSizeBytes = 5 * 1024 * 1024;
/** Parts of one file in flight at once: at most this many parts of it are held in memory. */
const partsInFlight = 2;

/** The S3 client of `settings`: static keys when given, else the SDK's default chain (IAM roles, env). */
export function s3Client(settings: S3Settings): S3Client {
  const config: S3ClientConfig = {
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    // Checksums only where S3 requires them: S3-compatible servers do not all take the newer ones.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  };
  if (settings.endpoint) config.endpoint = settings.endpoint;
  if (settings.accessKeyId && settings.secretAccessKey) {
    config.credentials = { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey };
  }
  return new S3Client(config);
}

/**
 * Files as objects of one bucket, one object per key (`<prefix><key>`). Puts go through lib-storage's
 * Upload: a stream is sent in parts of 5 MiB, two at a time, so a large file never sits whole in memory.
 * Objects carry their content type and an attachment Content-Disposition; downloads are presigned GETs.
 */
export function createS3FileStore(settings: S3Settings, client: S3Client = s3Client(settings)): FileStore {
  const { bucket } = settings;
  const prefix = settings.prefix ?? "";
  const objectKey = (key: string) => {
    assertStorageKey(key);
    return `${prefix}${key}`;
  };

  return {
    async put(key, content, file) {
      const upload = new Upload({
        client,
        partSize: partSizeBytes,
        queueSize: partsInFlight,
        leavePartsOnError: false,
        params: {
          Bucket: bucket,
          Key: objectKey(key),
          Body: content instanceof Uint8Array ? content : Readable.from(content),
          ContentType: file?.contentType ?? "application/octet-stream",
          ...(file ? { ContentDisposition: attachmentDisposition(file.name) } : {}),
        },
      });
      await upload.done();
    },

    async get(key) {
      try {
        const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
        return res.Body ? await res.Body.transformToByteArray() : new Uint8Array();
      } catch (err) {
        if (err instanceof NoSuchKey || (err as { name?: string }).name === "NoSuchKey") return undefined;
        throw err;
      }
    },

    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
    },

    async downloadUrl(key, file, expiresInSeconds) {
      // The overrides are part of the signature: whatever the object says, this link downloads as named.
      const command = new GetObjectCommand({
        Bucket: bucket,
        Key: objectKey(key),
        ResponseContentType: file.contentType,
        ResponseContentDisposition: attachmentDisposition(file.name),
      });
      return getSignedUrl(client, command, { expiresIn: expiresInSeconds });
    },
  };
}
