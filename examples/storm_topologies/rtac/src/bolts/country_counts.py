"""Count distinct active users per country."""

from collections import defaultdict

from streamparse import Bolt

from output_files import JsonLinesOutput


class CountryCountsBolt(Bolt):
    outputs = ["country", "users"]

    def initialize(self, conf, ctx):
        self.users = defaultdict(set)
        self.output = JsonLinesOutput(self, conf)

    def process(self, tup):
        country = tup.values.country
        users = self.users[country]
        before = len(users)
        users.add(tup.values.user_id)
        if len(users) != before:
            self.output.write({"country": country, "users": len(users)})
            self.emit([country, len(users)])
