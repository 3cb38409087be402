"""`poker-play`: a terminal client for people (Textual), over the platform's gRPC services."""
