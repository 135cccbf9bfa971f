"""Finding what a spout's code reads besides its input: clocks and outside sources."""

from __future__ import annotations

from pathlib import Path

from heronbridge.compat.streamparse import load_project
from heronbridge.conformance import inputs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "storm_topologies"


def test_clock_reads_and_outside_sources_are_found_by_what_the_names_mean(tmp_path):
    module = tmp_path / "spout.py"
    module.write_text(
        "import time, socket, sys\n"
        "import datetime as dt\n"
        "from time import time as now\n"
        "from uuid import uuid4\n"
        "import kafka.consumer\n"
        "\n"
        "def next_tuple(self):\n"
        "    time.sleep(0.1)\n"  # waiting reads nothing
        "    stamp = now(); later = dt.datetime.now()\n"
        "    line = sys.stdin.readline()\n"
        "    key = uuid4()\n"
        "    conn = socket.create_connection(('h', 1))\n"
        "    kafka.consumer.KafkaConsumer()\n")
    assert inputs.scan_module(module, "spouts/spout.py") == [
        "time.time() (spouts/spout.py:9)", "datetime.datetime.now() (spouts/spout.py:9)",
        "sys.stdin.readline() (spouts/spout.py:10)", "uuid.uuid4() (spouts/spout.py:11)",
        "socket.create_connection() (spouts/spout.py:12)",
        "kafka.consumer.KafkaConsumer() (spouts/spout.py:13)"]


def test_a_module_that_does_not_parse_reads_nothing_known(tmp_path):
    module = tmp_path / "broken.py"
    module.write_text("def (:\n")
    assert inputs.scan_module(module, "broken.py") == []


def test_the_examples_spouts_read_only_their_options_and_files(tmp_path):
    project = load_project(EXAMPLES / "wordcount", None, None, {}, False, tmp_path / "r")
    assert inputs.scan_project(project) == {"word_spout": []}
    inputs.write(tmp_path, {"word_spout": ["time.time() (spouts/words.py:3)"]})
    assert inputs.read(tmp_path) == {"word_spout": ["time.time() (spouts/words.py:3)"]}
    assert inputs.read(tmp_path / "nowhere") is None
