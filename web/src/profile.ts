// The player's profile: the display name the other players see at the tables and in chat (the lobby's
// GetMyProfile, changed with SetDisplayName). The sign-in's own name (Session.display_name) is only a
// suggestion the lobby may have adjusted, so the page asks for the profile after every sign-in and
// shows that name; a change takes the name the lobby answers with.
import { lobby, newRequestId } from "./api";
import { onSessionChange } from "./session";

let name = "";
let loadedFor = "";
const listeners: ((name: string) => void)[] = [];

/** The profile's display name; "" until the lobby has answered. */
export function profileName(): string {
  return name;
}

export function onProfileChange(listener: (name: string) => void): void {
  listeners.push(listener);
}

function adopt(value: string): void {
  name = value;
  for (const listener of listeners) listener(name);
}

/** Asks the lobby for the player's profile (GetMyProfile). */
export async function loadProfile(): Promise<string> {
  const reply = await lobby.getMyProfile({});
  adopt(reply.profile?.displayName ?? "");
  return name;
}

/** Changes the player's display name (SetDisplayName, a fresh request id each time); the name is the
 * lobby's answer (it normalises spaces). Throws the lobby's refusal. */
export async function changeDisplayName(value: string): Promise<string> {
  const reply = await lobby.setDisplayName({ requestId: newRequestId(), displayName: value });
  adopt(reply.profile?.displayName || value);
  return name;
}

// A new sign-in (or a kept session resumed) reads the profile once; signing out forgets it. A failed
// read is tried again with the next renewal of the token.
onSessionChange((signed) => {
  if (!signed) {
    loadedFor = "";
    if (name) adopt("");
    return;
  }
  if (signed.playerId === loadedFor) return;
  if (name) adopt("");
  loadedFor = signed.playerId;
  loadProfile().catch(() => {
    loadedFor = "";
  });
});
