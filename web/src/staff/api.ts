// The Connect clients of the staff door (the page's own origin: the door serves the console and the
// staff's share of the services), the staff token on every call, and the staff member's reason: every
// call that changes something carries `x-staff-reason` (their own words, URI-encoded; the door refuses
// a change without one, STAFF_REASON_REQUIRED) and a request id made once per action (kept for a retry
// of the same action, so a retry is never applied twice).
import { createClient, type CallOptions } from "@connectrpc/connect";
import { openDoor, newRequestId } from "../connect_door";
import { StaffGatewayService } from "../gen/poker/gateway/v1/staff_pb";
import { LobbyService } from "../gen/poker/lobby/v1/lobby_pb";
import { TableService } from "../gen/poker/table/v1/table_pb";
import { CashierService } from "../gen/poker/cashier/v1/cashier_pb";
import { HistoryService } from "../gen/poker/history/v1/history_pb";
import { failure } from "../errors";
import { staffRefusal } from "../i18n/staff_words";

const staffDoor = openDoor(15_000);
export const useToken = staffDoor.useToken;

export const door = createClient(StaffGatewayService, staffDoor.unary);
export const lobby = createClient(LobbyService, staffDoor.unary);
export const table = createClient(TableService, staffDoor.unary);
// The spectator's stream lives as long as the screen watches: no deadline.
export const tableStreams = createClient(TableService, staffDoor.streaming);
export const cashier = createClient(CashierService, staffDoor.unary);
export const history = createClient(HistoryService, staffDoor.unary);

/** The most a reason may be (the door's limit). */
export const REASON_MAX = 500;

/** The call options of a change: the staff member's reason in the `x-staff-reason` header. */
export function because(reason: string): CallOptions {
  return { headers: { "x-staff-reason": encodeURIComponent(reason) } };
}

/** A failed call in the staff member's words (the reason's sentence, never the server's wording). */
export function describe(error: unknown): string {
  return staffRefusal(failure(error));
}

export { newRequestId };

/** One action of the staff member: its request id stays the same for every retry of that action,
 * and a new one is made only once it succeeded (the next action is another one). */
export class Action {
  private id = newRequestId();

  get requestId(): string {
    return this.id;
  }

  /** The action went through: the next one gets a new id. */
  done(): void {
    this.id = newRequestId();
  }
}

export { failure, type Failure } from "../errors";
