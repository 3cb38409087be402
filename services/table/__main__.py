"""Process entry point: `python -m services.table`."""

from service_runtime.process import run_service
from services.table.assembly import assemble
from services.table.settings import TableSettings


def main() -> None:
    run_service(TableSettings, assemble)


if __name__ == "__main__":
    main()
