// The player's profile: the display name the other players see at the tables and in chat (the lobby's
// GetMyProfile, changed with SetDisplayName), and the Telegram photo their seats show unless they
// turn it off (SetShowAvatar; the lobby has the photo from the player's Telegram sign-in). The
// sign-in's own name (Session.display_name) is only a suggestion the lobby may have adjusted, so the
// page asks for the profile after every sign-in and shows that name; a change takes the name the
// lobby answers with.
import { lobby, newRequestId } from "./api";
import { onSessionChange } from "./session";
import type { PlayerProfile } from "./gen/poker/lobby/v1/lobby_pb";

let name = "";
/** The player's Telegram photo ("" for none) and whether their seats show it. */
let avatar = { url: "", shown: true };
let loadedFor = "";
const listeners: ((name: string) => void)[] = [];

/** The profile's display name; "" until the lobby has answered. */
export function profileName(): string {
  return name;
}

/** The profile's photo ("" for none) and whether the player's seats show it. */
export function profileAvatar(): { url: string; shown: boolean } {
  return avatar;
}

export function onProfileChange(listener: (name: string) => void): void {
  listeners.push(listener);
}

function adopt(value: string, profile?: PlayerProfile): void {
  name = value;
  if (profile) avatar = { url: profile.avatarUrl, shown: profile.showAvatar };
  for (const listener of listeners) listener(name);
}

/** Asks the lobby for the player's profile (GetMyProfile). */
export async function loadProfile(): Promise<string> {
  const reply = await lobby.getMyProfile({});
  adopt(reply.profile?.displayName ?? "", reply.profile);
  return name;
}

/** Changes the player's display name (SetDisplayName, a fresh request id each time); the name is the
 * lobby's answer (it normalises spaces). Throws the lobby's refusal. */
export async function changeDisplayName(value: string): Promise<string> {
  const reply = await lobby.setDisplayName({ requestId: newRequestId(), displayName: value });
  adopt(reply.profile?.displayName || value, reply.profile);
  return name;
}

/** Shows the player's photo at their seats or not (SetShowAvatar; tables follow it from the next
 * seat). Throws the lobby's refusal. */
export async function showAvatar(on: boolean): Promise<boolean> {
  const reply = await lobby.setShowAvatar({ requestId: newRequestId(), showAvatar: on });
  adopt(reply.profile?.displayName || name, reply.profile);
  return avatar.shown;
}

// A new sign-in (or a kept session resumed) reads the profile once; signing out forgets it. A failed
// read is tried again with the next renewal of the token.
onSessionChange((signed) => {
  if (!signed) {
    loadedFor = "";
    avatar = { url: "", shown: true };
    if (name) adopt("");
    return;
  }
  if (signed.playerId === loadedFor) return;
  avatar = { url: "", shown: true };
  if (name) adopt("");
  loadedFor = signed.playerId;
  loadProfile().catch(() => {
    loadedFor = "";
  });
});
