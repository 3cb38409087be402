// A failed call as the page reads it: the Connect code's name and the platform's error reason
// (google.rpc.ErrorInfo), apart from api.ts (which opens the transports at load) so the pure parts
// that decide on a failure (feed_loop.ts) run without a page.
import { ConnectError, Code } from "@connectrpc/connect";
import { BinaryReader } from "@bufbuild/protobuf/wire";

export interface Failure {
  code: string;
  reason: string;
  message: string;
}

function errorInfoReason(value: Uint8Array): string {
  // google.rpc.ErrorInfo: field 1 is the reason.
  const reader = new BinaryReader(value);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1) return reader.string();
    reader.skip(wireType);
  }
  return "";
}

export function failure(error: unknown): Failure {
  const e = ConnectError.from(error);
  let reason = "";
  for (const detail of e.details) {
    if ("type" in detail && detail.type === "google.rpc.ErrorInfo" && "value" in detail) {
      reason = errorInfoReason(detail.value);
    }
  }
  return { code: Code[e.code] ?? String(e.code), reason, message: e.rawMessage };
}
