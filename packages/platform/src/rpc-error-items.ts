// A call's error as a message (google.rpc.Status's shape: code, message, details as Any), for a batch whose
// items each succeed or fail on their own (SaveResponses), and back into the ConnectError the item's caller
// would have got from a call of its own: the same code, message and details (a BadRequest's field violations).
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

const typeUrlPrefix = "type.googleapis.com/";

export interface RpcErrorShape {
  code: number;
  message: string;
  details: { typeUrl: string; value: Uint8Array }[];
}

export function rpcErrorOf(err: ConnectError): RpcErrorShape {
  return {
    code: err.code,
    message: err.rawMessage,
    details: err.details.map((detail) =>
      "desc" in detail
        ? anyPack(detail.desc, create(detail.desc, detail.value))
        : { typeUrl: typeUrlPrefix + detail.type, value: detail.value },
    ),
  };
}

export function connectErrorOf(error: RpcErrorShape): ConnectError {
  const code = error.code in Code ? (error.code as Code) : Code.Unknown;
  const err = new ConnectError(error.message, code);
  // As details come off the wire: read with findDetails(schema).
  err.details.push(...error.details.map((any) => ({ type: any.typeUrl.slice(any.typeUrl.lastIndexOf("/") + 1), value: any.value })));
  return err;
}
