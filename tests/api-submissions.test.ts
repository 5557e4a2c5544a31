import { submissionsApiSuite } from "./support/submissions-api-suite.ts";

// Files in the local directory under DATA_DIR (the embedded default); api-submissions-s3 runs the same on S3.
submissionsApiSuite("local");
