"""APIs of other systems, hosted on the runtime."""
