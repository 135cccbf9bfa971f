"""The analysis of a conformance run, on PySpark: parity of what every component
emitted, grouping, delivery and order properties on each system and across them, and
each system's latency and throughput.

    from heronbridge.conformance.analysis import analyse, session
    spark = session()                      # ~10 s once; share it between analyses
    result = analyse(run_dir, scenario, spark=spark)
    result.ok, result.verdicts, result.stats["storm"].latency_ms
"""

from .results import FAIL, INFO, KNOWN, PASS, Analysis, SystemStats, Verdict
from .run import analyse
from .spark import session

__all__ = ["FAIL", "INFO", "KNOWN", "PASS", "Analysis", "SystemStats", "Verdict", "analyse",
           "session"]
