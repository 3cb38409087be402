"""Process entry point: `python -m services.history`."""

from service_runtime.process import run_service
from services.history.assembly import assemble
from services.history.settings import HistorySettings


def main() -> None:
    run_service(HistorySettings, assemble)


if __name__ == "__main__":
    main()
