import { Code, ConnectError } from "@connectrpc/connect";
import { refusalDomain, refusals, type RefusalCode } from "@formsvc/form-document/response-rules";
import { ErrorInfoSchema } from "@formsvc/proto/google/rpc/error_details_pb.js";

/** A response rule's refusal (response-rules.ts): PERMISSION_DENIED with its message, and its code as ErrorInfo's reason. */
export function refused(code: RefusalCode): ConnectError {
  return new ConnectError(refusals[code], Code.PermissionDenied, undefined, [{ desc: ErrorInfoSchema, value: { reason: code, domain: refusalDomain } }]);
}
