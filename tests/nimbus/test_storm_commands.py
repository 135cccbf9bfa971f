"""Storm 2.8's own command classes (storm-core's org.apache.storm.command.*, on the
classpath the conformance suite resolves) against `heronbridge nimbus`, with the word
count submitted by streamparse's full `sparse submit` (its lein jar step included): each
prints what it prints against Nimbus. And Storm's client over Nimbus's TLS port."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nimbuskit import (
    command_classpath,
    kill_with_storm,
    listed,
    sparse,
    storm,
    wordcount_project,
)
from testkit import wait_until
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TFramedTransportFactory

from heronbridge.nimbus import idl
from heronbridge.nimbus.server import NimbusServer
from heronbridge.nimbus.service import NimbusService
from heronbridge.runtime.scheduler import Home

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from tlskit import CertificateAuthority  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.conformance]

@pytest.fixture(scope="module")
def storm_classpath(storm_install):
    return command_classpath(storm_install)


@pytest.mark.compat("sparse/sparse submit", "sparse/sparse jar", "nimbus/getLeader",
                    "nimbus/activate", "nimbus/deactivate", "nimbus/rebalance",
                    "nimbus/killTopologyWithOpts", "nimbus/setLogConfig", "nimbus/debug")
def test_storm_commands_on_a_sparse_submitted_topology(nimbus, tmp_path, storm_classpath):
    if shutil.which("lein") is None:
        pytest.fail("sparse submit builds its jar with Leiningen: expected `lein` on PATH "
                    "(tox's conformance env installs Debian's leiningen)")
    # The spout reads its text for ever (rounds 0): debug() below needs words still flowing.
    project = wordcount_project(tmp_path, nimbus.port, tmp_path / "out", options={
        "example.output.dir": str(tmp_path / "out"), "wordcount.rounds": 0})
    done = sparse(project, "submit", "-e", "test", "-n", "wordcount")
    assert done.returncode == 0, done.stdout + done.stderr + nimbus.output()
    assert re.search(r"JAR created: .*wordcount-0\.0\.1-SNAPSHOT\.jar", done.stdout)

    # Storm takes a deactivate as soon as submit has returned, while the workers start.
    client = make_client(idl().Nimbus, host="127.0.0.1", port=nimbus.port,
                         proto_factory=TBinaryProtocolFactory(),
                         trans_factory=TFramedTransportFactory(), timeout=300000)
    client.deactivate("wordcount")

    seeds = {"nimbus.seeds": '["127.0.0.1"]', "nimbus.thrift.port": nimbus.port}
    code, out = storm(storm_classpath, "ListTopologies", **seeds)
    assert code == 0, out
    assert "Found leader nimbus : 127.0.0.1:" in out  # getLeader's host is the seed's
    [row] = listed(out)
    assert row[:4] == ["wordcount", "INACTIVE", "3", "1"] and row[5].startswith("wordcount-")

    for command, said, status in (("Activate", "Activated topology: wordcount", "ACTIVE"),
                                  ("Deactivate", "Deactivated topology: wordcount", "INACTIVE")):
        code, out = storm(storm_classpath, command, "wordcount", **seeds)
        assert code == 0 and said in out, out
        assert listed(storm(storm_classpath, "ListTopologies", **seeds)[1])[0][1] == status
    client.activate("wordcount")

    # Storm's SetLogLevel (setLogConfig): the root logger at DEBUG in every task, for 5 s.
    code, out = storm(storm_classpath, "SetLogLevel", "-l", "ROOT=DEBUG:5", "wordcount",
                      **seeds)
    assert code == 0, out
    logs = list((nimbus.home / "topologies" / "wordcount" / "current").glob(
        "container-*/logs/task-*-count_bolt.log"))
    assert logs
    wait_until(lambda: all("log level of 'root' set to DEBUG for 5s" in p.read_text()
                           for p in logs), 30, "the level set in every count_bolt task")
    wait_until(lambda: all("log level of 'root' back to" in p.read_text() for p in logs), 30,
               "the level put back after its timeout")

    # Storm UI's Debug through Nimbus's debug(), on Storm 2.8's IDL: half the words the
    # spout emits are written beside its task's log; disabled, none more.
    client.debug("wordcount", "word_spout", True, 50.0)
    current = nimbus.home / "topologies" / "wordcount" / "current"
    found = wait_until(lambda: [p for p in current.glob("container-*/logs/events-*-word_spout"
                                                        ".jsonl") if p.stat().st_size], 30,
                       "sampled words beside the spout's log")
    events = found[0]
    assert json.loads(events.read_text().splitlines()[0])["component"] == "word_spout"
    client.debug("wordcount", "", False, 0.0)
    time.sleep(3)  # the last flush
    size = events.stat().st_size
    time.sleep(2)
    assert events.stat().st_size == size
    with pytest.raises(TApplicationException, match="has no component 'nosuch'"):
        client.debug("wordcount", "nosuch", True, 10.0)

    code, out = storm(storm_classpath, "Rebalance", "wordcount", "-e", "nosuch=2", **seeds)
    assert code != 0
    assert ("InvalidTopologyException(msg:Invalid component nosuch for topology wordcount, "
            "valid values are count_bolt,word_spout)") in out
    code, out = storm(storm_classpath, "Rebalance", "wordcount", "-e", "count_bolt=3", **seeds)
    assert code == 0, out  # heronbridge update: count_bolt goes from 2 tasks to 3
    wait_until(lambda: listed(storm(storm_classpath, "ListTopologies", **seeds)[1])[0][1:3]
               == ["ACTIVE", "4"], 120, "ListTopologies to show the rebalanced topology",
               on_timeout=nimbus.output)
    code, out = storm(storm_classpath, "Activate", "nosuch", **seeds)
    assert code != 0 and "NotAliveException(msg:nosuch is not alive)" in out, out

    kill_with_storm(storm_classpath, nimbus, "wordcount", **seeds)


def test_storm_client_over_the_tls_port(tmp_path, storm_classpath):
    ca = CertificateAuthority(tmp_path / "ca")
    cert, key = ca.issue("127.0.0.1")
    client_cert, client_key = ca.issue("127.0.0.2")
    # Storm reads the client's key as a traditional PEM key pair, its truststore as PKCS12.
    from cryptography.hazmat.primitives import serialization as s

    pair = tmp_path / "client.key"
    pair.write_bytes(s.load_pem_private_key(client_key.read_bytes(), None).private_bytes(
        s.Encoding.PEM, s.PrivateFormat.TraditionalOpenSSL, s.NoEncryption()))
    trust = tmp_path / "trust.p12"
    keytool = Path(storm_classpath[0]).resolve().parent / "keytool"
    subprocess.run([str(keytool), "-importcert", "-noprompt", "-alias", "ca", "-file",
                    str(ca.path), "-keystore", str(trust), "-storetype", "PKCS12",
                    "-storepass", "changeit"], check=True, capture_output=True)
    home = Home(tmp_path / "home")
    state = home.open_statemgr()
    server = NimbusServer(NimbusService(home, state), port=0,
                          tls=(str(cert), str(key), str(ca.path)), tls_port=0).start()
    try:
        tls = {"nimbus.seeds": '["127.0.0.1"]', "nimbus.thrift.port": server.port,
               "nimbus.thrift.client.use.tls": "true", "nimbus.thrift.tls.port": server.tls_port,
               "nimbus.thrift.tls.client.truststore.path": trust,
               "nimbus.thrift.tls.client.truststore.password": "changeit",
               "nimbus.thrift.tls.client.cert.path": client_cert}
        code, out = storm(storm_classpath, "ListTopologies", **tls,
                          **{"nimbus.thrift.tls.client.key.path": pair})
        assert code == 0 and "No topologies running." in out, out
        # Without the client's certificate the TLS port refuses it: no leader found.
        code, out = storm(storm_classpath, "ListTopologies", **tls,
                          **{"nimbus.thrift.tls.client.auth.required": "false"})
        assert code != 0 and "NimbusLeaderNotFoundException" in out, out
    finally:
        server.close()
        state.close()
