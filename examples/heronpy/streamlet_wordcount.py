"""Word count on heronpy's Streamlet API, over tumbling windows:
sentences -> flat_map(split) -> map((word, 1)) -> reduce_by_key_and_window(+) -> to_sink.

    heronbridge run examples/heronpy/streamlet_wordcount.py -t 10

The source sends its sentences in bursts: `wordcount.burst` sentences (default 50) every
`wordcount.gap` seconds (default 2.2), `wordcount.bursts` times (default: forever). The
counts are summed per word over tumbling windows of `wordcount.window` seconds (default
1); the sink logs each window's counts, or with `-o wordcount.out=DIR` writes each
(window, word, count) as a JSON line to DIR/windows-TASK.jsonl.
"""

import datetime
import json
import logging
import sys
import time
from pathlib import Path

from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.runner import Runner
from heronpy.streamlet.windowconfig import WindowConfig

from heronbridge.shims.heronpy.sink import Sink

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]


class Bursts(Generator):
    """`burst` sentences at once (the cycle of SENTENCES goes on from burst to burst),
    then nothing until `gap` seconds after the burst began."""

    def setup(self, context):
        config = context.get_config()
        self.burst = int(config.get("wordcount.burst", 50))
        self.gap = float(config.get("wordcount.gap", 2.2))
        self.bursts = config.get("wordcount.bursts")
        self.sent = 0
        self.next_burst = time.monotonic()

    def get(self):
        if self.bursts is not None and self.sent >= self.burst * int(self.bursts):
            return None
        if self.sent % self.burst == 0:  # a burst begins: wait for its time
            if time.monotonic() < self.next_burst:
                return None
            self.next_burst += self.gap
        self.sent += 1
        return SENTENCES[(self.sent - 1) % len(SENTENCES)]


class WindowCounts(Sink):
    def setup(self, context):
        out = context.get_config().get("wordcount.out")
        self.out = Path(out) / f"windows-{context.get_task_id()}.jsonl" if out else None
        self.log = logging.getLogger("wordcount")

    def put(self, element):
        keyed, count = element
        window = keyed._window
        line = {"start": window._start_time, "end": window._end_time, "word": keyed._key,
                "count": count}
        if self.out is None:
            self.log.info("%s", line)
            return
        with self.out.open("a") as f:
            f.write(json.dumps(line) + "\n")


def build(window_secs=1):
    builder = Builder()
    window = WindowConfig.create_tumbling_window(datetime.timedelta(seconds=window_secs))
    (builder.new_source(Bursts()).set_name("sentences")
     .flat_map(lambda sentence: sentence.split()).set_name("words")
     .map(lambda word: (word, 1)).set_name("ones")
     .reduce_by_key_and_window(window, lambda a, b: a + b).set_name("counts")
     .to_sink(WindowCounts()))
    return builder


if __name__ == "__main__":
    Runner().run(sys.argv[1] if len(sys.argv) > 1 else "StreamletWordCount", Config(), build())
