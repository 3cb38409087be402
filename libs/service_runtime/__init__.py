"""service_runtime package."""
