"""The topology master: physical plan, registrations, start, metrics, controller."""
