"""The built web client (make web writes web/dist), served from memory: the gateway reads the folder
once at start, so a request path only ever selects one of the files it found (no path reaches the
file system), and every page answer carries headers that keep it to itself."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path

MAX_ASSET_BYTES = 8 * 1024 * 1024
# Telegram opens Mini Apps in its apps and, on the web, inside an iframe of web.telegram.org. The one
# script from elsewhere is Telegram's Mini App API, admitted by its exact path (not all of telegram.org).
TELEGRAM_WEB_APP_SCRIPT = "https://telegram.org/js/telegram-web-app.js"
# The only images from elsewhere: players' Telegram photos, by their path on t.me (the lobby keeps no
# other URL: `AVATAR_URL_PREFIX` of services/lobby/avatars.py, which a test holds this to).
TELEGRAM_USER_PHOTOS = "https://t.me/i/userpic/"
CONTENT_SECURITY_POLICY = (
    f"default-src 'self'; script-src 'self' {TELEGRAM_WEB_APP_SCRIPT}; connect-src 'self'; "
    f"img-src 'self' data: {TELEGRAM_USER_PHOTOS}; style-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'self' https://web.telegram.org"
)
# The staff console (web/dist/staff, served only at the staff door): the Telegram Login Widget's script
# and its frame besides the page's own files, and staff members' Telegram photos.
STAFF_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self' https://telegram.org; frame-src https://oauth.telegram.org; "
    "connect-src 'self'; img-src 'self' data: https://t.me; style-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
# The console's folder in the built web client (the players' page never serves it).
STAFF_FOLDER = "staff"
NOT_BUILT = b"""<!doctype html><meta charset="utf-8"><title>Poker</title>
<p>The web client is not built: run <code>make web</code> (needs npm), then reload.</p>"""


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str


class WebAssets:
    def __init__(self, files: dict[str, Asset], csp: str = CONTENT_SECURITY_POLICY) -> None:
        self._files = files
        self.csp = csp

    @classmethod
    def load(
        cls, root: Path, *, exclude: tuple[str, ...] = (), csp: str = CONTENT_SECURITY_POLICY
    ) -> WebAssets:
        """The files under `root` (but those under its subfolders named in `exclude`), served with `csp`."""
        files: dict[str, Asset] = {}
        if root.is_dir():
            for path in sorted(root.rglob("*")):
                if path.relative_to(root).parts[0] in exclude:
                    continue
                if path.is_file() and path.stat().st_size <= MAX_ASSET_BYTES:
                    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                    if kind.startswith("text/") or kind in ("application/javascript", "image/svg+xml"):
                        kind += "; charset=utf-8"
                    files["/" + path.relative_to(root).as_posix()] = Asset(path.read_bytes(), kind)
        if "/index.html" not in files:
            files["/index.html"] = Asset(NOT_BUILT, "text/html; charset=utf-8")
        return cls(files, csp)

    @property
    def built(self) -> bool:
        return self._files["/index.html"].body != NOT_BUILT

    def find(self, path: str) -> Asset | None:
        """The asset at `path`; `/` and any path without a file extension is the page itself."""
        if path == "/" or "." not in path.rsplit("/", 1)[-1]:
            path = "/index.html"
        return self._files.get(path)


def headers_for(asset: Asset, csp: str = CONTENT_SECURITY_POLICY) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", asset.content_type.encode()),
        (b"content-length", str(len(asset.body)).encode()),
        (b"cache-control", b"no-cache"),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"content-security-policy", csp.encode()),
    ]
