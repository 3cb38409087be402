// The Connect clients of the gateway (same origin), the player's token on every call, and the
// platform's error reason (google.rpc.ErrorInfo) read from a failed call.
import { createClient, ConnectError, Code, type Interceptor } from "@connectrpc/connect";
import { failure } from "./errors";
import { createConnectTransport } from "@connectrpc/connect-web";
import { GatewayService } from "./gen/poker/gateway/v1/gateway_pb";
import { LobbyService } from "./gen/poker/lobby/v1/lobby_pb";
import { TableService } from "./gen/poker/table/v1/table_pb";
import { CashierService } from "./gen/poker/cashier/v1/cashier_pb";
import { HistoryService } from "./gen/poker/history/v1/history_pb";
import { FairnessService } from "./gen/poker/fairness/v1/fairness_pb";
import { refusalText } from "./i18n/words";

let currentToken: () => string = () => "";

export function useToken(source: () => string): void {
  currentToken = source;
}

const bearer: Interceptor = (next) => async (request) => {
  const token = currentToken();
  if (token) request.header.set("authorization", `Bearer ${token}`);
  return next(request);
};

const transport = createConnectTransport({
  baseUrl: location.origin,
  useBinaryFormat: true,
  interceptors: [bearer],
  defaultTimeoutMs: 10_000,
});
// Streams live as long as the page watches; no deadline.
const streaming = createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true, interceptors: [bearer] });

export const gateway = createClient(GatewayService, transport);
export const lobby = createClient(LobbyService, transport);
export const table = createClient(TableService, transport);
export const tableStreams = createClient(TableService, streaming);
export const cashier = createClient(CashierService, transport);
export const history = createClient(HistoryService, transport);
export const fairness = createClient(FairnessService, transport);

/** A failed call in the player's words (the reason's sentence, never the server's developer wording). */
export function describe(error: unknown): string {
  return refusalText(failure(error));
}

export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export { Code, ConnectError };
export { failure, type Failure } from "./errors";
