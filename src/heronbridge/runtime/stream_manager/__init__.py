"""The stream manager: routing, XOR acking and backpressure for one container."""
