// The Connect clients of the gateway (same origin), the player's token on every call, and the
// platform's error reason (google.rpc.ErrorInfo) read from a failed call.
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { failure } from "./errors";
import { openDoor } from "./connect_door";
import { GatewayService } from "./gen/poker/gateway/v1/gateway_pb";
import { LobbyService } from "./gen/poker/lobby/v1/lobby_pb";
import { TableService } from "./gen/poker/table/v1/table_pb";
import { CashierService } from "./gen/poker/cashier/v1/cashier_pb";
import { HistoryService } from "./gen/poker/history/v1/history_pb";
import { FairnessService } from "./gen/poker/fairness/v1/fairness_pb";
import { refusalText } from "./i18n/words";

const door = openDoor(10_000);
export const useToken = door.useToken;

export const gateway = createClient(GatewayService, door.unary);
export const lobby = createClient(LobbyService, door.unary);
export const table = createClient(TableService, door.unary);
export const tableStreams = createClient(TableService, door.streaming);
export const cashier = createClient(CashierService, door.unary);
export const history = createClient(HistoryService, door.unary);
export const fairness = createClient(FairnessService, door.unary);

/** A failed call in the player's words (the reason's sentence, never the server's developer wording). */
export function describe(error: unknown): string {
  return refusalText(failure(error));
}

export { Code, ConnectError };
export { newRequestId } from "./connect_door";
export { failure, type Failure } from "./errors";
