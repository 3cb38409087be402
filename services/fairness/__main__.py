"""Process entry point: `python -m services.fairness`."""

from service_runtime.process import run_service
from services.fairness.assembly import assemble
from services.fairness.settings import FairnessSettings


def main() -> None:
    run_service(FairnessSettings, assemble)


if __name__ == "__main__":
    main()
