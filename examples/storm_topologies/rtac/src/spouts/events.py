"""Synthetic user activity events, generated deterministically."""

import time

from streamparse import Spout

from output_files import int_option

COUNTRIES = ["us", "de", "fr", "br", "in", "jp", "ng"]
EVENT_TYPES = ["view", "click", "like", "share", "search"]
USERS = 389
EPOCH = 1_700_000_000
EVENTS_PER_CALL = 10


def generate_event(i):
    """The i-th raw event ``[user_id, country, event_type, ts]``.

    Raw fields are messy the way client logs are: user ids and country codes
    come in mixed case and with stray whitespace, and every 97th event has a
    blank user id. A user always reports the same country.
    """
    user = (i * 7919 + 13) % USERS
    user_id = f"user-{user:04d}"
    if i % 3 == 0:
        user_id = user_id.upper()
    if i % 97 == 96:
        user_id = "  "
    country = COUNTRIES[(user * user + user // 5) % len(COUNTRIES)]
    if i % 2 == 0:
        country = country.upper()
    if i % 5 == 0:
        country = f" {country} "
    event_type = EVENT_TYPES[i % len(EVENT_TYPES)]
    ts = EPOCH + i * 3
    return [user_id, country, event_type, ts]


def generate_events(count):
    return [generate_event(i) for i in range(count)]


class EventSpout(Spout):
    outputs = ["user_id", "country", "event_type", "ts"]

    def initialize(self, stormconf, context):
        self.count = int_option(stormconf, "rtac.count", 1000)
        self.next_i = 0

    def next_tuple(self):
        if self.next_i >= self.count:
            time.sleep(0.01)
            return
        end = min(self.next_i + EVENTS_PER_CALL, self.count)
        for i in range(self.next_i, end):
            self.emit(generate_event(i))
        self.next_i = end
        if self.next_i == self.count:
            self.logger.info("all %d events emitted", self.count)
