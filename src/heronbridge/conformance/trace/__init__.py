"""The tracing hook: one hook, the same on Storm and on the runtime, that records what
every task received, emitted, acked and failed, and injects the scenario's faults.

It works on multilang messages, so it needs nothing from the component's language: on
the runtime's in-process components it is the shim's message hook; around a multilang
subprocess (on Storm, or on the runtime with --multilang) a small proxy process applies
it to the pipes.
"""
