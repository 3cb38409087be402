// The Connect transports of a door (the page's own origin: the players' gateway for the Mini App, the
// staff door for the console), the signed-in token on every call, and the request ids of changes.
// Each page's api.ts makes its clients from one door.
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";

export interface Door {
  /** Unary calls: each with the door's default deadline. */
  unary: Transport;
  /** Streams live as long as the page watches: no deadline. */
  streaming: Transport;
  /** Where the token comes from (read on every call; none is sent while it is empty). */
  useToken(source: () => string): void;
}

export function openDoor(defaultTimeoutMs: number): Door {
  let currentToken: () => string = () => "";
  const bearer: Interceptor = (next) => async (request) => {
    const token = currentToken();
    if (token) request.header.set("authorization", `Bearer ${token}`);
    return next(request);
  };
  const base = { baseUrl: location.origin, useBinaryFormat: true, interceptors: [bearer] };
  return {
    unary: createConnectTransport({ ...base, defaultTimeoutMs }),
    streaming: createConnectTransport(base),
    useToken(source) {
      currentToken = source;
    },
  };
}

/** A new idempotency key: 128 random bits in hex (one per action; a retry of that action keeps it). */
export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
