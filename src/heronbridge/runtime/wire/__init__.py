"""What crosses sockets: frame layout, control messages, value serializers."""
