"""Process entry point: `python -m services.lobby`."""

from service_runtime.process import run_service
from services.lobby.assembly import assemble
from services.lobby.settings import LobbySettings


def main() -> None:
    run_service(LobbySettings, assemble)


if __name__ == "__main__":
    main()
