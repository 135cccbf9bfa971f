"""Sum record values per category in tick-driven batches."""

from streamparse import BatchingBolt

from output_files import JsonLinesOutput


class CategoryTotalsBolt(BatchingBolt):
    """Collects records between tick tuples and emits one total per category.

    BatchingBolt processes its batches on every tick after the first
    ``ticks_between_batches`` ticks, then acks every tuple of the batch.
    """

    ticks_between_batches = 1
    outputs = ["category", "size", "sum"]

    def initialize(self, conf, ctx):
        self.output = JsonLinesOutput(self, conf)

    def group_key(self, tup):
        return tup.values.category

    def process_batch(self, key, tups):
        total = sum(tup.values.value for tup in tups)
        self.output.write({"category": key, "size": len(tups), "sum": total})
        self.emit([key, len(tups), total])
