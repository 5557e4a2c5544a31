// Node's error codes of a connection that was refused, reset, cut or timed out: the one list the checks
// for "the other end cannot be reached right now" (a database, another service) start from.
export const connectionFailureCodes: readonly string[] = ["ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"];
