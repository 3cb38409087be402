// The audit trail as JSON lines (the export of the audit screen): one JSON object a line, each event
// with event_id, time (RFC 3339, UTC), actor, kind, subject, player_ids, table_id, hand_ids, details
// and, for a STAFF_ACTION, staff_action {roles, method, why, code, reason, room_id, case_id,
// request_id, mutating}. Pure (no page, no generated code), so tests/web runs it on plain objects.

/** The parts of an AuditEvent the export reads (the generated message has them all). */
export interface AuditEventLike {
  eventId: string;
  time?: { seconds: bigint | number; nanos?: number };
  actor: string;
  kind: string;
  subject: string;
  details: string;
  playerIds: readonly string[];
  tableId: string;
  handIds: readonly string[];
  staffAction?: {
    roles: readonly string[];
    method: string;
    why: string;
    code: string;
    reason: string;
    roomId: string;
    caseId: string;
    requestId: string;
    mutating: boolean;
  };
}

/** A protobuf Timestamp as RFC 3339 in UTC (`2026-03-01T12:00:00Z`, with the fraction when it has
 * one: `.250Z`, never more than milliseconds); "" when unset. */
export function rfc3339(time: AuditEventLike["time"]): string {
  if (!time) return "";
  const seconds = Number(time.seconds);
  const millis = Math.floor((time.nanos ?? 0) / 1_000_000);
  const text = new Date(seconds * 1000 + millis).toISOString();
  return millis ? text : text.replace(".000Z", "Z");
}

/** One event as the export's object (the field order is the line's). */
export function auditRecord(event: AuditEventLike): Record<string, unknown> {
  const record: Record<string, unknown> = {
    event_id: event.eventId,
    time: rfc3339(event.time),
    actor: event.actor,
    kind: event.kind,
    subject: event.subject,
    player_ids: [...event.playerIds],
    table_id: event.tableId,
    hand_ids: [...event.handIds],
    details: event.details,
  };
  const action = event.staffAction;
  if (event.kind === "STAFF_ACTION" && action) {
    record.staff_action = {
      roles: [...action.roles],
      method: action.method,
      why: action.why,
      code: action.code,
      reason: action.reason,
      room_id: action.roomId,
      case_id: action.caseId,
      request_id: action.requestId,
      mutating: action.mutating,
    };
  }
  return record;
}

/** One event as one line (JSON has no raw line break in a string, so a line is an event). */
export function auditLine(event: AuditEventLike): string {
  return JSON.stringify(auditRecord(event));
}

/** The events as a JSON-lines file: each on its line, the file ending with a line break ("" for none). */
export function auditLines(events: readonly AuditEventLike[]): string {
  return events.map((e) => `${auditLine(e)}\n`).join("");
}

/** The export's file name: `audit-<UTC time>.jsonl` (`audit-20260301T120000Z.jsonl`). */
export function exportFileName(now: Date): string {
  return `audit-${now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}.jsonl`;
}
