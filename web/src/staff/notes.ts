// Support's notes on a player (support and risk: RecordAuditEvent, kind OPERATOR_NOTE): a note of up
// to 500 printable characters written into the audit trail about the player (subject and player_ids
// the player, details the note), its event id made once per note and kept for a retry of the same note
// (history stores an identical event once), and the `x-staff-reason` the door requires: the note's
// first words. The player's notes are listed under the form, newest first, with their author and time
// (ListAuditEvents kind OPERATOR_NOTE, player_id).
import { h, toast } from "../ui";
import { st } from "../i18n/staff_words";
import { Action, because, describe, history } from "./api";
import { cleanReason } from "./reason";
import { load, say, status, when } from "./widgets";

export const NOTE_KIND = "OPERATOR_NOTE";
/** The most a note may be (history's printable characters, counted as characters). */
export const NOTE_MAX = 500;
/** The most of the note's first words that go as the reason. */
const REASON_WORDS = 120;

/** The note as it is recorded: on one line (line breaks and other spaces as one space), without
 * control or format characters (history takes printable text only), trimmed. */
export function noteText(words: string): string {
  return cleanReason(words.replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/gu, " "));
}

/** The reason of a note (the `x-staff-reason` header): its first words, cut at a word's end. */
export function noteReason(note: string): string {
  const chars = [...note];
  if (chars.length <= REASON_WORDS) return note;
  const cut = chars.slice(0, REASON_WORDS - 1).join("");
  const space = cut.lastIndexOf(" ");
  return `${(space > 20 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function notesList(out: HTMLElement, playerId: string): void {
  void load(out, async () => {
    const { events } = await history.listAuditEvents({ kind: NOTE_KIND, playerId, page: { pageSize: 50 } });
    if (!events.length) return h("p", { class: "muted", id: "notes-none" }, st("notes.none"));
    return h(
      "ul",
      { class: "notes", id: "player-notes" },
      ...events.map((e) =>
        h(
          "li",
          { class: "note", "data-event": e.eventId, "data-actor": e.actor },
          h("span", { class: "note-head muted" }, h("span", { class: "actor" }, e.actor), " · ", h("time", {}, when(e.time))),
          h("span", { class: "data note-text" }, e.details),
        ),
      ),
    );
  });
}

/** The notes of a player: the form (a new note) and the list. */
export function notesPanel(playerId: string): HTMLElement {
  const list = h("div", { id: "player-notes-list" });
  const text = h("textarea", { name: "note", id: "note-text", class: "reason", required: true, maxlength: NOTE_MAX, rows: 3, placeholder: st("notes.placeholder") });
  const line = status("note-form-status");
  const button = h("button", { type: "submit", id: "note-save" }, st("notes.save"));
  // One note, one event id: kept while the same note is retried, new once it is recorded or changed.
  const action = new Action();
  let last = "";
  const form = h(
    "form",
    {
      class: "action-form",
      id: "note-form",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const note = noteText(text.value);
        if (!note) {
          say(line, st("notes.required"), "error");
          text.focus();
          return;
        }
        if ([...note].length > NOTE_MAX) {
          say(line, st("notes.too_long", { max: NOTE_MAX }), "error");
          return;
        }
        if (note !== last) {
          if (last) action.done();
          last = note;
        }
        button.disabled = true;
        say(line, st("common.sending"));
        try {
          await history.recordAuditEvent(
            { event: { eventId: `note-${action.requestId}`, kind: NOTE_KIND, subject: playerId, playerIds: [playerId], details: note } },
            because(noteReason(note)),
          );
          action.done();
          last = "";
          text.value = "";
          say(line, st("notes.saved"), "ok");
          toast(st("notes.saved"));
          notesList(list, playerId);
        } catch (error) {
          const words = describe(error);
          say(line, words, "error");
          toast(words, "error");
        } finally {
          button.disabled = false;
        }
      },
    },
    h("label", { class: "field" }, h("span", { class: "field-label" }, st("notes.label")), text, h("span", { class: "field-hint muted" }, st("notes.hint", { max: NOTE_MAX }))),
    h("div", { class: "form-actions" }, button),
    line,
  );
  notesList(list, playerId);
  return h("div", {}, form, list);
}
