"""Kafka records to a bolt that writes what it saw (and fails some on purpose)."""

from parts.records import RecordBolt, RecordSpout
from streamparse import Grouping, Topology


class Records(Topology):
    records = RecordSpout.spec(par=2)
    # by record: its retries reach the task that counts its sightings
    seen = RecordBolt.spec(inputs={records: Grouping.fields("partition", "offset")}, par=2)
