// The Connect clients of the staff door (the page's own origin: the door serves the console and the
// staff's share of the services), the staff token on every call, and the staff member's reason: every
// call that changes something carries `x-staff-reason` (their own words, URI-encoded; the door refuses
// a change without one, STAFF_REASON_REQUIRED) and a request id made once per action (kept for a retry
// of the same action, so a retry is never applied twice).
import { createClient, type CallOptions, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { StaffGatewayService } from "../gen/poker/gateway/v1/staff_pb";
import { LobbyService } from "../gen/poker/lobby/v1/lobby_pb";
import { TableService } from "../gen/poker/table/v1/table_pb";
import { CashierService } from "../gen/poker/cashier/v1/cashier_pb";
import { HistoryService } from "../gen/poker/history/v1/history_pb";
import { failure } from "../errors";
import { staffRefusal } from "../i18n/staff_words";

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
  defaultTimeoutMs: 15_000,
});

// The spectator's stream lives as long as the screen watches: no deadline.
const streaming = createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true, interceptors: [bearer] });

export const door = createClient(StaffGatewayService, transport);
export const lobby = createClient(LobbyService, transport);
export const table = createClient(TableService, transport);
export const tableStreams = createClient(TableService, streaming);
export const cashier = createClient(CashierService, transport);
export const history = createClient(HistoryService, transport);

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

/** A new idempotency key (one per action the staff member takes). */
export function newRequestId(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

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
