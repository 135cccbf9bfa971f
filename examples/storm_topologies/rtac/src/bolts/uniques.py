"""Pass on each user id the first time it is seen."""

from streamparse import Bolt


class UniquesBolt(Bolt):
    """Fields-grouped on ``user_id``, so each user id reaches one task only."""

    outputs = ["country", "user_id"]

    def initialize(self, conf, ctx):
        self.seen = set()

    def process(self, tup):
        user_id = tup.values.user_id
        if user_id in self.seen:
            return
        self.seen.add(user_id)
        self.emit([tup.values.country, user_id])
