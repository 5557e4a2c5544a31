import { join } from "node:path";
import { repoRoot } from "@formsvc/launcher/system.ts";
import { startS3Mock } from "../../deploy/s3/s3mock-runner.ts";

/** Where a test system keeps uploaded files: its settings, and how to stop what holds them. */
export interface FileStoreSetup {
  env: Record<string, string>;
  /** The S3 endpoint file links redirect to; undefined for the local directory (the gateway serves bytes). */
  s3Endpoint?: string;
  stop(): Promise<void>;
}

export type FileStoreName = "local" | "s3";

/** The local directory under DATA_DIR (the default), or a real S3 server: S3Mock on loopback. */
export const fileStores: Record<FileStoreName, () => Promise<FileStoreSetup>> = {
  local: async () => ({ env: {}, stop: async () => {} }),
  s3: async () => {
    const s3 = await startS3Mock({ log: join(repoRoot, "test-output", `s3mock-${process.pid}.log`) });
    return { env: s3.env, s3Endpoint: s3.endpoint, stop: () => s3.stop() };
  },
};
