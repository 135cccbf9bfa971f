"""The endpoint's answers to both IDLs a client may hold (streamparse's Storm 1.1.1 copy
and Storm 2.8's), its errors as Nimbus raises them, and who may connect."""

from __future__ import annotations

import json
import os
import socket
import ssl
import sys
from pathlib import Path

import pytest
from packaging.version import Version
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_client
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TTransportException,
)

from heronbridge.nimbus import NimbusError, idl
from heronbridge.nimbus.blobstore import BlobStore
from heronbridge.nimbus.server import NimbusServer
from heronbridge.nimbus.service import NimbusService
from heronbridge.nimbus.submit import nimbus_client, upload, write_jar
from heronbridge.runtime.scheduler import Home

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from tlskit import CertificateAuthority  # noqa: E402


@pytest.fixture
def endpoint(tmp_path):
    home = Home(tmp_path / "home")
    state = home.open_statemgr()
    server = NimbusServer(NimbusService(home, state), port=0).start()
    yield server
    server.close()
    state.close()


def storm28(server: NimbusServer):
    """A client on Storm 2.8's IDL, as Storm's own classes hold it."""
    return make_client(idl().Nimbus, host=server.host, port=server.port,
                       proto_factory=TBinaryProtocolFactory(),
                       trans_factory=TFramedTransportFactory(), timeout=20000)


@pytest.mark.compat("nimbus/getClusterInfo", "nimbus/getTopologySummaries", "nimbus/getLeader",
                    "nimbus/getNimbusConf", "nimbus/isTopologyNameAllowed",
                    "cli/heronbridge nimbus")
def test_both_idls_read_the_cluster(endpoint):
    old, new = nimbus_client(endpoint.host, endpoint.port), storm28(endpoint)
    cluster = old.getClusterInfo()
    assert [n.version for n in cluster.nimbuses] == ["2.8.3"]
    assert Version(cluster.nimbuses[0].version) >= Version("1.1.0")  # sparse parses it
    assert [s.host for s in cluster.supervisors] == [socket.gethostname()]
    assert cluster.topologies == []
    assert new.getTopologySummaries() == []
    leader = new.getLeader()  # Storm's NimbusClient keeps a connection whose host matches
    assert (leader.host, leader.port, leader.isLeader) == ("127.0.0.1", endpoint.port, True)
    conf = json.loads(old.getNimbusConf())
    assert conf["storm.version"] == "2.8.3" and conf["nimbus.thrift.port"] == endpoint.port
    assert new.isTopologyNameAllowed("wordcount") is True
    assert old.isTopologyNameAllowed("word:count") is False


@pytest.mark.compat("nimbus/killTopologyWithOpts", "nimbus/activate", "nimbus/deactivate",
                    "nimbus/rebalance", "nimbus/getTopologyInfoByName",
                    "nimbus/submitTopologyWithOpts", "nimbus/uploadChunk",
                    partly="its refusals (unknown topology, bad name or jar)")
def test_errors_are_nimbus_exceptions(endpoint, tmp_path):
    from streamparse import thrift as sp

    old, new = nimbus_client(endpoint.host, endpoint.port), storm28(endpoint)
    t = idl()
    for call, exc in ((lambda: old.killTopologyWithOpts("nope", sp.KillOptions(wait_secs=0)),
                       sp.NotAliveException),
                      (lambda: old.activate("nope"), sp.NotAliveException),
                      (lambda: new.deactivate("nope"), t.NotAliveException),
                      (lambda: new.rebalance("nope", t.RebalanceOptions(num_workers=2)),
                       t.NotAliveException),
                      (lambda: new.getTopologyInfoByName("nope"), t.NotAliveException)):
        with pytest.raises(exc) as raised:
            call()
        assert raised.value.msg == "nope is not alive"

    topology = t.StormTopology(spouts={}, bolts={}, state_spouts={})
    with pytest.raises(t.InvalidTopologyException, match=r"Topology name 'a/b' is not valid"):
        new.submitTopologyWithOpts("a/b", "", "{}", topology,
                                   t.SubmitOptions(t.TopologyInitialStatus.ACTIVE))
    with pytest.raises(t.InvalidTopologyException, match="not a jar uploaded to this Nimbus"):
        new.submitTopologyWithOpts("t", "/etc/passwd", "{}", topology,
                                   t.SubmitOptions(t.TopologyInitialStatus.ACTIVE))
    with pytest.raises(TApplicationException, match="File for that location does not exist"):
        new.uploadChunk(str(tmp_path / "elsewhere.jar"), b"x")
    assert not (tmp_path / "elsewhere.jar").exists()
    # A call Storm 2.8 removed, as any Thrift server answers a method it does not have.
    with pytest.raises(TApplicationException, match="Invalid method name: 'beginFileDownload'"):
        old.beginFileDownload("x")
    assert old.getClusterInfo().topologies == []  # the connection still serves


@pytest.mark.integration
def test_java_components_are_refused_by_name_without_a_jvm_host(endpoint, tmp_path):
    from streamparse import Grouping, JavaSpout, ShellBolt, Topology
    from streamparse.thrift import InvalidTopologyException, SubmitOptions, TopologyInitialStatus

    class Mixed(Topology):
        java_words = JavaSpout.spec(full_class_name="org.example.WordSpout", args_list=[],
                                    outputs=["word"])
        counter = ShellBolt.spec(command="streamparse_run", script="bolts.Counter",
                                 inputs={java_words: Grouping.fields("word")})

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bolts.py").write_text(
        "from streamparse import Bolt\n\n\nclass Counter(Bolt):\n"
        "    def process(self, tup):\n        pass\n")
    client = nimbus_client(endpoint.host, endpoint.port)
    location = upload(client, write_jar(tmp_path / "src", tmp_path / "mixed.jar"))
    with pytest.raises(InvalidTopologyException) as raised:
        client.submitTopologyWithOpts("mixed", location, "{}", Mixed.thrift_topology,
                                      SubmitOptions(TopologyInitialStatus.ACTIVE))
    assert "component 'java_words'" in raised.value.msg
    # This endpoint was given no JVM task host (`heronbridge nimbus` gives it one).
    assert "Java components (java_words) need the JVM task host" in raised.value.msg
    assert client.getClusterInfo().topologies == []


def test_beyond_loopback_only_with_mutual_tls(tmp_path):
    home = Home(tmp_path / "home")
    state = home.open_statemgr()
    with pytest.raises(NimbusError, match="beyond loopback, only with TLS"):
        NimbusServer(NimbusService(home, state), host="192.0.2.7", port=0)

    ca = CertificateAuthority(tmp_path / "ca")
    cert, key = ca.issue("127.0.0.1")
    client_cert, client_key = ca.issue("127.0.0.2")
    server = NimbusServer(NimbusService(home, state), port=0,
                          tls=(str(cert), str(key), str(ca.path)), tls_port=0).start()
    try:
        def tls_client(with_certificate: bool):
            context = ssl.create_default_context(cafile=str(ca.path))
            context.check_hostname = False
            if with_certificate:
                context.load_cert_chain(client_cert, client_key)
            # Nimbus's TLS port: the binary protocol straight on TLS (no frames).
            return make_client(idl().Nimbus, host="127.0.0.1", port=server.tls_port,
                               proto_factory=TBinaryProtocolFactory(),
                               trans_factory=TBufferedTransportFactory(), timeout=20000,
                               ssl_context=context)

        assert tls_client(True).getLeader().tlsPort == server.tls_port
        with pytest.raises((TTransportException, ssl.SSLError, OSError)):
            tls_client(False).getClusterInfo()
    finally:
        server.close()
        state.close()


@pytest.mark.integration
def test_plain_port_takes_this_users_processes_only(endpoint):
    """The loopback port serves this user's (and root's) processes, as the runtime's Unix
    sockets do; another local user's connection is closed unread."""
    import os
    import struct

    payload = struct.pack("!i", -2147418111) + struct.pack("!i", 9) + b"getLeader" + \
        struct.pack("!i", 0) + b"\x00"  # a strict binary CALL of getLeader(), no args
    call = struct.pack("!i", len(payload)) + payload

    def answered(uid: int | None) -> int:
        """Bytes of reply a process running as `uid` gets (its own socket, made after
        setuid in a forked child)."""
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: only the socket calls below, then _exit
            code = 1
            try:
                if uid is not None:
                    os.setuid(uid)
                with socket.create_connection(("127.0.0.1", endpoint.port), 10) as sock:
                    try:
                        sock.sendall(call)
                        reply = sock.recv(65536)
                    except ConnectionResetError:
                        reply = b""
                    os.write(write, str(len(reply)).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        got = os.read(read, 32)
        os.close(read)
        assert os.waitpid(pid, 0)[1] == 0
        return int(got)

    assert answered(None) > 0  # this user: getLeader's reply
    if os.geteuid() != 0:
        pytest.skip("another user's connection needs root to make (setuid)")
    assert answered(65534) == 0  # nobody: closed without a reply


@pytest.mark.compat("nimbus/beginCreateBlob", "nimbus/beginUpdateBlob", "nimbus/uploadBlobChunk",
                    "nimbus/finishBlobUpload", "nimbus/cancelBlobUpload", "nimbus/getBlobMeta",
                    "nimbus/setBlobMeta", "nimbus/beginBlobDownload",
                    "nimbus/downloadBlobChunk", "nimbus/deleteBlob", "nimbus/listBlobs",
                    "nimbus/getBlobReplication", "nimbus/updateBlobReplication",
                    "nimbus/isRemoteBlobExists")
def test_the_blob_store_keeps_names_owner_only_within_limits(endpoint, tmp_path):
    t, client = idl(), storm28(endpoint)
    store = endpoint.service.blobs
    acl = [t.AccessControl(type=t.AccessControlType.USER, access=7),
           t.AccessControl(type=t.AccessControlType.OTHER, access=1)]

    def put(key: str, data: bytes, update: bool = False) -> None:
        session = client.beginUpdateBlob(key) if update else \
            client.beginCreateBlob(key, t.SettableBlobMeta(acl=acl))
        for i in range(0, len(data), 1000):
            client.uploadBlobChunk(session, data[i:i + 1000])
        client.finishBlobUpload(session)

    def get(key: str) -> bytes:
        begun, parts = client.beginBlobDownload(key), []
        while chunk := client.downloadBlobChunk(begun.session):
            parts.append(chunk)
        assert begun.data_size == sum(map(len, parts))
        return b"".join(parts)

    with pytest.raises(t.KeyNotFoundException, match="dep-a.jar"):
        client.getBlobMeta("dep-a.jar")  # what DependencyUploader asks before it creates
    data = bytes(range(256)) * 300  # more than one download chunk
    put("dep-a.jar", data)
    assert get("dep-a.jar") == data
    meta = client.getBlobMeta("dep-a.jar")
    assert meta.settable.acl == acl and meta.version > 0
    with pytest.raises(t.KeyAlreadyExistsException):
        client.beginCreateBlob("dep-a.jar", t.SettableBlobMeta(acl=[]))
    put("dep-a.jar", b"new", update=True)
    assert get("dep-a.jar") == b"new" and client.getBlobMeta("dep-a.jar").version > meta.version
    client.setBlobMeta("dep-a.jar", t.SettableBlobMeta(acl=acl[:1]))
    assert client.getBlobMeta("dep-a.jar").settable.acl == acl[:1]
    assert client.updateBlobReplication("dep-a.jar", 3) == 1 == \
        client.getBlobReplication("dep-a.jar")  # one copy, this Nimbus's
    cancelled = client.beginCreateBlob("cancelled", t.SettableBlobMeta(acl=[]))
    client.uploadBlobChunk(cancelled, b"x")
    client.cancelBlobUpload(cancelled)
    assert client.isRemoteBlobExists("dep-a.jar") and not client.isRemoteBlobExists("cancelled")

    # Owner-only on disk; listed a page at a time, as NimbusBlobStore's iterator asks.
    folder = endpoint.service.home.root / "nimbus" / "blobs"
    for path in (folder, folder / "dep-a.jar", *(folder / "dep-a.jar").iterdir()):
        assert path.stat().st_mode & 0o077 == 0, path
    for i in range(120):
        (folder / f"k{i:03}").mkdir(mode=0o700)
    keys, listed = client.listBlobs(""), []
    while keys.keys:
        listed += keys.keys
        keys = client.listBlobs(keys.session)
    assert listed == ["dep-a.jar", *(f"k{i:03}" for i in range(120))]

    # A key is a name: no path, no '..'; nothing trusted that another could have written.
    for key in ("../x", "a/b", "..", "a..b", "/etc/passwd", ""):
        with pytest.raises(TApplicationException, match="is not a valid blob key"):
            client.beginCreateBlob(key, t.SettableBlobMeta(acl=[]))
    (folder / "k000").chmod(0o755)
    (folder / "k001").rmdir()
    (folder / "k001").symlink_to(folder / "dep-a.jar")
    for key in ("k000", "k001"):
        with pytest.raises(TApplicationException, match="not this user's alone; refused"):
            client.getBlobMeta(key)

    # A size limit per blob: the upload past it is refused and given up.
    store.max_blob_bytes = 2000
    session = client.beginCreateBlob("big", t.SettableBlobMeta(acl=[]))
    client.uploadBlobChunk(session, b"x" * 1500)
    with pytest.raises(TApplicationException, match="at most 2000 bytes"):
        client.uploadBlobChunk(session, b"x" * 1500)
    with pytest.raises(TApplicationException, match="does not exist"):
        client.finishBlobUpload(session)
    assert not client.isRemoteBlobExists("big")

    client.deleteBlob("dep-a.jar")
    with pytest.raises(t.KeyNotFoundException):
        client.deleteBlob("dep-a.jar")
    stale = endpoint.service.home.root / "nimbus" / "blob-uploads" / "left-by-a-crash"
    fresh = stale.with_name("being-written")
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")
    os.utime(stale, (1, 1))  # idle for longer than a session may be
    BlobStore(folder, stale.parent)  # as the next `heronbridge nimbus` opens it
    assert not stale.exists() and fresh.exists()

    # A submit naming a dependency jar the store lacks is refused, the key named.
    location = upload(client, write_jar(tmp_path / "src", tmp_path / "t.jar"))
    topology = t.StormTopology(spouts={}, bolts={}, state_spouts={},
                               dependency_jars=["dep-gone.jar"])
    with pytest.raises(t.InvalidTopologyException, match="'dep-gone.jar'.*no such blob"):
        client.submitTopologyWithOpts("deps", location, "{}", topology,
                                      t.SubmitOptions(t.TopologyInitialStatus.ACTIVE))
    client.close()
