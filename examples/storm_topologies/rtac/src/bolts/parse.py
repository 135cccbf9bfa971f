"""Normalise raw events into ``[user_id, country]``."""

from streamparse import Bolt


def normalise(user_id, country):
    """Lowercase, stripped user id and uppercase, stripped country code."""
    return user_id.strip().lower(), country.strip().upper()


class ParseBolt(Bolt):
    outputs = ["user_id", "country"]

    def initialize(self, conf, ctx):
        self.dropped = 0

    def process(self, tup):
        user_id, country = normalise(tup.values.user_id, tup.values.country)
        if not user_id or not country:
            self.dropped += 1
            self.logger.debug("dropping event without user or country: %r", tup.values)
            return
        self.emit([user_id, country])
