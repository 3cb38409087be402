"""Process entry point: `python -m services.cashier`."""

from service_runtime.structured_logging import quiet_grpc_core


def main() -> None:
    quiet_grpc_core()
    # Imported only now: gRPC core reads GRPC_VERBOSITY as grpc is first imported, and these import it.
    from service_runtime.process import run_service
    from services.cashier.assembly import assemble
    from services.cashier.settings import CashierSettings

    run_service(CashierSettings, assemble)


if __name__ == "__main__":
    main()
