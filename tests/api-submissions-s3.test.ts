import { submissionsApiSuite } from "./support/submissions-api-suite.ts";

// The same suite with files in a real S3-compatible server (S3Mock on loopback).
submissionsApiSuite("s3");
