"""
Real-time active user counting: distinct users per country.
"""

from streamparse import Grouping, Topology

from bolts.country_counts import CountryCountsBolt
from bolts.parse import ParseBolt
from bolts.uniques import UniquesBolt
from spouts.events import EventSpout


class Rtac(Topology):
    events = EventSpout.spec()
    parse = ParseBolt.spec(inputs={events: Grouping.SHUFFLE}, par=2)
    uniques = UniquesBolt.spec(inputs={parse: Grouping.fields("user_id")}, par=2)
    country_counts = CountryCountsBolt.spec(inputs={uniques: Grouping.fields("country")}, par=2)
