"""Hole 4, on a real ZooKeeper: a root, or a folder under it, that another digest identity
made first and left open to all is refused by name, before anything is read or written
there; a root of our own is used, and another identity cannot change what is in it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl

from heronbridge.runtime.errors import StateManagerError
from heronbridge.runtime.statemgr import open_statemgr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cluster"))
from zkserver import ZooKeeperServer  # noqa: E402

pytestmark = pytest.mark.cluster

ME = "victim:victim-password"
THEM = "mallory:mallory-password"


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory):
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    try:
        yield server
    finally:
        server.close()


def client(zookeeper, auth):
    zk = KazooClient(zookeeper.hosts, auth_data=[("digest", auth)])
    zk.start(10)
    return zk


@pytest.mark.parametrize("where", ["root", "folder", "root theirs alone"])
def test_a_root_another_identity_opened_is_refused(zookeeper, where):
    root = f"/squatted-{where.replace(' ', '-')}"
    mallory = client(zookeeper, THEM)
    try:
        if where == "root":
            mallory.create(root, acl=OPEN_ACL_UNSAFE)
        elif where == "folder":  # a root tightened after another identity made a folder
            mallory.create(root, acl=OPEN_ACL_UNSAFE)
            mallory.create(f"{root}/topologies", acl=OPEN_ACL_UNSAFE)
            mallory.set_acls(root, [make_digest_acl(*ME.split(":"), all=True)])
        else:  # theirs, others may only read: we could not write, and must not trust it
            mallory.create(root, acl=[make_digest_acl(*THEM.split(":"), all=True)])
        path = root if where != "folder" else f"{root}/topologies"
        refused = (rf"not allowed to read the ACL of {path}" if where == "root theirs alone"
                   else rf"the ZooKeeper node {path} exists and .* refusing to use it")
        with pytest.raises(StateManagerError, match=refused):
            open_statemgr(zookeeper.uri(root.lstrip("/")), ME)
        # Nothing was written there (read by whoever may read it).
        reader = client(zookeeper, ME) if where == "folder" else mallory
        try:
            assert reader.get_children(root) in ([], ["topologies"])
        finally:
            if reader is not mallory:
                reader.stop()
    finally:
        mallory.stop()


def test_our_own_root_is_used_and_others_cannot_change_it(zookeeper):
    state = open_statemgr(zookeeper.uri("ours"), ME)
    try:
        state.put_secret("wc", b"s" * 32)
    finally:
        state.close()
    again = open_statemgr(zookeeper.uri("ours"), ME)  # found, ours: used
    again.close()
    mallory = client(zookeeper, THEM)
    try:
        with pytest.raises(NoAuthError):
            mallory.delete("/ours/secrets/wc")
        with pytest.raises(NoAuthError):
            mallory.create("/ours/topologies/wc", b"x")
    finally:
        mallory.stop()
