"""Service runtime shared by every service: settings, logging, errors, auth, server, clients, storage."""
