"""What the Storm and heronpy hosts share: the hook and probe protocols, component logs,
the state mixin's contract."""
