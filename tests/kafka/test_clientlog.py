"""librdkafka's lines in a component's log: a failure repeated every few milliseconds while
a broker is down is logged once per window, with a count of what was held back."""

from __future__ import annotations

import logging

from heronbridge.kafka.clientlog import RepeatsHeldBack, client_logger, error_callback

REFUSED = ("FAIL [wc-lines-4#consumer-5] [thrd:127.0.0.1:%d/bootstrap]: Connect to "
           "ipv4#127.0.0.1:%d failed: Connection refused (after %dms in state CONNECT)")


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_repeated_failure_is_logged_once_a_window_with_what_was_held_back(caplog):
    clock = Clock()
    logger = logging.getLogger("pystorm.component.lines.test-held-back")
    logger.addFilter(RepeatsHeldBack(window=30.0, clock=clock))
    with caplog.at_level(logging.INFO, logger=logger.name):
        for i in range(200):  # 10 s of a refused connection, every 50 ms
            clock.now = i * 0.05
            logger.log(logging.ERROR, REFUSED, 25662, 25662, i % 3)
        logger.info("a different line")
        clock.now = 31.0
        logger.log(logging.ERROR, REFUSED, 25662, 25662, 0)
        logger.log(logging.WARNING, REFUSED, 25662, 25662, 0)  # another level: its own
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4, lines
    assert lines[0].endswith("(after 0ms in state CONNECT)")
    assert lines[1] == "a different line"
    assert lines[2].endswith("(and 199 more like it in the 31 s before)"), lines[2]
    assert not lines[3].endswith("before)")


def test_librdkafkas_lines_reach_the_components_log_and_fatal_errors_are_errors(caplog):
    component = logging.getLogger("pystorm.component.sink-test")
    client = client_logger(component)
    assert client_logger(component) is client and len(client.filters) == 1
    on_error = error_callback(client, "topology 'wc', component 'sink', task 7")

    class Err:
        def __init__(self, fatal):
            self._fatal = fatal

        def fatal(self):
            return self._fatal

        def __str__(self):
            return "KafkaError{code=_TRANSPORT}" if not self._fatal else "fenced"

    with caplog.at_level(logging.INFO, logger=component.name):
        on_error(Err(False))
        on_error(Err(False))
        on_error(Err(True))
    assert [(r.name, r.levelname) for r in caplog.records] == [
        ("pystorm.component.sink-test.librdkafka", "INFO"),
        ("pystorm.component.sink-test.librdkafka", "ERROR")]
    assert caplog.records[0].getMessage() == (
        "topology 'wc', component 'sink', task 7: Kafka: KafkaError{code=_TRANSPORT}")
