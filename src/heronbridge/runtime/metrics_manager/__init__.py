"""The metrics manager: per-container collection, JSON-lines sink, forwarding."""
