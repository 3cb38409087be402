"""`mint-token`: print a bearer token for local runs and tests, signed with the configured key.

    mint-token --subject alice --roles player
    mint-token --subject table --roles service --ttl 3600     # a service token names its service

It reads the same POKER_AUTH_KEYS setting the services verify with (the development key by default).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import ClassVar

from service_runtime.auth import Role, ServiceName, TokenKeys, mint_token, valid_signal
from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import SettingsError, load_settings


@dataclass(frozen=True, kw_only=True)
class MintSettings(ServiceSettings):
    ENV_PREFIX: ClassVar[str] = "POKER_MINT_"
    SERVICE: ClassVar[str] = "mint-token"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="mint-token", description="Print a signed bearer token.")
    parser.add_argument(
        "--subject",
        required=True,
        help="player id, or with the service role one of: " + ", ".join(s.value for s in ServiceName),
    )
    parser.add_argument(
        "--roles", default="player", help="comma-separated: " + ", ".join(r.value for r in Role)
    )
    parser.add_argument("--ttl", type=int, default=3600, help="seconds until it expires")
    parser.add_argument("--device", default="", help="the token's device signal (fair play), 1-128 ASCII")
    parser.add_argument("--network", default="", help="the token's network signal (fair play), 1-128 ASCII")
    args = parser.parse_args(argv)
    try:
        roles = [Role(r.strip()) for r in args.roles.split(",") if r.strip()]
    except ValueError:
        parser.error(f"unknown role in {args.roles!r}")
    if Role.SERVICE in roles and args.subject not in {s.value for s in ServiceName}:
        parser.error(
            f"a service token names its service: --subject one of {', '.join(s.value for s in ServiceName)}"
        )
    if args.ttl <= 0:
        parser.error("--ttl must be positive")
    for name in ("device", "network"):
        if getattr(args, name) and not valid_signal(getattr(args, name)):
            parser.error(f"--{name} must be 1-128 printable ASCII characters without spaces")
    try:
        settings = load_settings(MintSettings)
    except SettingsError as error:
        raise SystemExit(str(error)) from error
    keys = TokenKeys.from_settings(settings.auth_keys)
    print(
        mint_token(
            keys,
            args.subject,
            roles,
            now=int(time.time()),
            ttl_seconds=args.ttl,
            device=args.device,
            network=args.network,
        )
    )


if __name__ == "__main__":
    main()
