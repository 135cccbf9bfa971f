"""A spout and a bolt that each report the version of semver this project pins
(virtualenvs/semver2.txt): it runs in the topology's own virtualenv."""

from bolts.report import ReportBolt
from spouts.versions import VersionSpout
from streamparse import Topology


class Semver2(Topology):
    version_spout = VersionSpout.spec()
    report_bolt = ReportBolt.spec(inputs=[version_spout], par=2)
