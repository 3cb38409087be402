"""Process entry point: `python -m services.cashier`."""

from service_runtime.process import run_service
from services.cashier.assembly import assemble
from services.cashier.settings import CashierSettings


def main() -> None:
    run_service(CashierSettings, assemble)


if __name__ == "__main__":
    main()
