// A player's picture at a seat: their Telegram photo where they show it (the view's `avatar_url`, which
// the lobby keeps only for Telegram's own photo URLs), else the initials of their display name. The
// photo is loaded lazily, without a referrer, and gives way to the initials if it fails to load. The
// initials are drawn by the stylesheet from an attribute (`data-initials`): a picture of the name, not
// a text of the page (nothing to translate), hidden from screen readers as the photo is (the seat's
// name stands beside it).
import { h } from "./ui";

/** Where players' photos come from: the page's Content-Security-Policy admits images from here only. */
export const PHOTO_PREFIX = "https://t.me/i/userpic/";

/** The initials of a display name: the first character of its first two words (words split at spaces,
 * dots, dashes and underscores), upper case: "Анна К." is "АК", "bot-7" "B7", "Zoë" "Z"; "" for none. */
export function initials(name: string): string {
  const words = name.split(/[\s._-]+/u).filter((word) => word.length > 0);
  return words
    .slice(0, 2)
    .map((word) => Array.from(word)[0] ?? "")
    .join("")
    .toLocaleUpperCase();
}

/** The round picture of a seat's player: the photo, or the initials of `name` (on error too). */
export function avatar(url: string, name: string): HTMLElement {
  const holder = h("span", { class: "avatar", "aria-hidden": "true" });
  const showInitials = (): void => {
    holder.replaceChildren();
    holder.classList.add("initials");
    holder.dataset.initials = initials(name);
  };
  if (url.startsWith(PHOTO_PREFIX)) {
    const photo = h("img", { src: url, alt: "", referrerpolicy: "no-referrer", loading: "lazy", decoding: "async", width: 20, height: 20 });
    photo.addEventListener("error", showInitials, { once: true });
    holder.append(photo);
  } else {
    showInitials();
  }
  return holder;
}
