"""The Heron Instance: one process per task, hosting one spout or bolt."""
