"""Process entry point: `python -m services.fairness`."""

from service_runtime.structured_logging import quiet_grpc_core


def main() -> None:
    quiet_grpc_core()
    # Imported only now: gRPC core reads GRPC_VERBOSITY as grpc is first imported, and these import it.
    from service_runtime.process import run_service
    from services.fairness.assembly import assemble
    from services.fairness.settings import FairnessSettings

    run_service(FairnessSettings, assemble)


if __name__ == "__main__":
    main()
