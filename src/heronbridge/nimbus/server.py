"""The Nimbus endpoint's listeners: Thrift's binary protocol, as Nimbus serves it.

- The plain port (`nimbus.thrift.port`, 6627): framed transport, as Storm's default
  SimpleTransportPlugin. It only ever listens on loopback, and takes connections from
  this user's processes (and root's) only, as the runtime's Unix sockets do: on Linux
  the peer socket's owner is read from /proc/net/tcp, and a connection whose owner
  cannot be read there is refused. Clients on other hosts reach it
  through SSH, as `sparse` does by default (use_ssh_for_nimbus).
- The TLS port (`nimbus.thrift.tls.port`): what Storm's TlsTransportPlugin serves, TLS
  with the client's certificate required and checked against a CA (mutual TLS), the
  binary protocol straight on the TLS stream. It may listen on any address: the client's
  certificate is its authentication.

Each connection gets its own thread (at most MAX_CONNECTIONS at once per port, and on
the TLS port at most MAX_HANDSHAKES handshakes at once, each given HANDSHAKE_SECS), so a
slow or hostile client never holds up the others; refusals are logged at most once per
LOG_EVERY_SECS per port.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import ssl
import threading
import time
from typing import Any

from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.thrift import TApplicationException, TProcessor
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TSocket,
    TTransportException,
)

from heronbridge.errors import HeronbridgeError
from heronbridge.runtime.errors import ConfigError
from heronbridge.runtime.procfs import tcp_peer_owner
from heronbridge.runtime.wire import tls

from . import NimbusError, idl
from .service import CONNECTION, NimbusService

log = logging.getLogger("heronbridge.nimbus")

MAX_CONNECTIONS = 64  # per port: a flood of one cannot lock the other out
MAX_HANDSHAKES = 16  # TLS handshakes under way at once on the TLS port
IDLE_SECS = 600.0  # Storm's storm.thrift.socket.timeout.ms
HANDSHAKE_SECS = 5.0
LOG_EVERY_SECS = 10.0


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tls_context(cert: str, key: str, ca: str) -> ssl.SSLContext:
    """A server context that requires a client certificate signed by `ca` (the runtime's
    listener context for TLS links)."""
    try:
        listener = tls.contexts((cert, key, ca))[0]
    except ConfigError as exc:
        msg = (f"the Nimbus TLS port expects a readable PEM certificate (--tls-cert), its key "
               f"(--tls-key) and the CA that signs the clients' certificates (--tls-ca): "
               f"{exc.__cause__ or exc}")
        raise NimbusError(msg) from exc
    if listener is None:  # contexts() gives None only when no TLS files are named
        msg = "the Nimbus TLS port was given no certificate files"
        raise NimbusError(msg)
    return listener


def _same_user(conn: socket.socket) -> bool:
    """The loopback peer's socket is held by a process of this user or root (fails
    closed: an owner that cannot be read, or a socket its process already closed, which
    the kernel lists as root's, is a stranger)."""
    return tcp_peer_owner(conn) in (0, os.getuid())


class _Refusals:
    """Refusal logs, at most one line per LOG_EVERY_SECS per listener with a count of the
    rest: a flood of bad connections must not fill the disk."""

    def __init__(self, port_name: str) -> None:
        self.port_name = port_name
        self.lock = threading.Lock()
        self.quiet_until = 0.0
        self.suppressed = 0

    def __call__(self, peer: Any, reason: str) -> None:
        with self.lock:
            now = time.monotonic()
            if now < self.quiet_until:
                self.suppressed += 1
                return
            more = f" ({self.suppressed} more refused since the last line)" \
                if self.suppressed else ""
            self.suppressed, self.quiet_until = 0, now + LOG_EVERY_SECS
        log.warning("Nimbus %s port: refusing %s: %s%s", self.port_name, peer, reason, more)


class Processor(TProcessor):
    """thriftpy2's processor, answering as a Java Thrift server does where it does not:
    an unknown method and an unexpected error become TApplicationExceptions with a
    message, instead of a dropped connection."""

    def process_in(self, iprot: Any) -> tuple:
        api, seqid, result, call = super().process_in(iprot)
        if isinstance(result, TApplicationException):
            result = TApplicationException(TApplicationException.UNKNOWN_METHOD,
                                           f"Invalid method name: '{api}'")
        return api, seqid, result, call

    def process(self, iprot: Any, oprot: Any) -> None:
        api, seqid, result, call = self.process_in(iprot)
        log.debug("Nimbus call %s from %s", api, CONNECTION.peer)
        if isinstance(result, TApplicationException):
            return self.send_exception(oprot, api, result, seqid)
        try:
            result.success = call()
        except TApplicationException as exc:
            return self.send_exception(oprot, api, exc, seqid)
        except Exception as exc:
            if not self.handle_exception(exc, result):
                if isinstance(exc, HeronbridgeError):
                    text = str(exc)
                else:
                    log.exception("Nimbus call %s failed", api)
                    text = f"Internal error processing {api}: {type(exc).__name__}: {exc}"
                return self.send_exception(oprot, api, TApplicationException(
                    TApplicationException.INTERNAL_ERROR, text), seqid)
        self.send_result(oprot, api, result, seqid)
        return None


class Listener:
    """One listening socket and the connections it accepted."""

    def __init__(self, server: NimbusServer, host: str, port: int,
                 context: ssl.SSLContext | None) -> None:
        self.server = server
        self.context = context
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.handshakes = threading.BoundedSemaphore(MAX_HANDSHAKES)
        self.refuse = _Refusals("TLS" if context else "plain")
        self.transport = TBufferedTransportFactory() if context else TFramedTransportFactory()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
        except OSError as exc:
            self.sock.close()
            msg = f"the Nimbus endpoint cannot listen on {host}:{port}: {exc}"
            raise NimbusError(msg) from exc
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._accept, daemon=True,
                                       name=f"nimbus-accept-{self.port}")

    def _accept(self) -> None:
        while not self.server.closed.is_set():
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return  # closed
            if not self.slots.acquire(blocking=False):
                self.refuse(peer, f"{MAX_CONNECTIONS} connections already open")
                conn.close()
                continue
            if self.context is not None and not self.handshakes.acquire(blocking=False):
                self.slots.release()
                self.refuse(peer, f"{MAX_HANDSHAKES} TLS handshakes already under way")
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn, peer), daemon=True,
                             name=f"nimbus-conn-{peer[1]}").start()

    def _serve(self, conn: socket.socket, peer: Any) -> None:
        try:
            if self.context is not None:
                conn.settimeout(HANDSHAKE_SECS)
                try:
                    conn = self.context.wrap_socket(conn, server_side=True)
                except (ssl.SSLError, OSError) as exc:
                    self.refuse(peer, f"TLS handshake failed: {exc}")
                    conn.close()
                    return
                finally:
                    self.handshakes.release()
            elif not _same_user(conn):
                self.refuse(peer, "its socket is not held by a process of this user")
                conn.close()
                return
            conn.settimeout(IDLE_SECS)
            CONNECTION.local_host = conn.getsockname()[0]
            CONNECTION.peer = f"{peer[0]}:{peer[1]}"
            client = TSocket(sock=conn)
            trans = self.transport.get_transport(client)
            proto = TBinaryProtocolFactory().get_protocol(trans)
            try:
                while not self.server.closed.is_set():
                    self.server.processor.process(proto, proto)
            except (TTransportException, OSError, EOFError):
                pass
            except Exception:
                log.exception("Nimbus: connection from %s failed", peer)
            finally:
                trans.close()
        finally:
            self.slots.release()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class NimbusServer:
    """The endpoint: the plain port on loopback, the TLS port where asked. The service
    learns the ports it answers getLeader with once they are bound (0 picks free ones)."""

    def __init__(self, service: NimbusService, host: str = "127.0.0.1", port: int = 6627,
                 tls: tuple[str, str, str] | None = None, tls_port: int = 6628) -> None:
        if not is_loopback(host) and tls is None:
            msg = (f"the Nimbus endpoint listens on {host!r}, beyond loopback, only with TLS "
                   "(--tls-cert, --tls-key, --tls-ca: clients then need a certificate that "
                   "CA signed); without it, keep the default loopback address and reach it "
                   "through SSH, as sparse does with use_ssh_for_nimbus")
            raise NimbusError(msg)
        self.closed = threading.Event()
        self.host = host if is_loopback(host) else "127.0.0.1"
        self.listeners = [Listener(self, self.host, port, None)]
        try:
            if tls is not None:
                self.listeners.append(Listener(self, host, tls_port, tls_context(*tls)))
        except BaseException:
            self.listeners[0].close()
            raise
        self.port = self.listeners[0].port
        self.tls_port = self.listeners[1].port if tls is not None else None
        service.host, service.port, service.tls_port = self.host, self.port, self.tls_port
        self.service = service
        self.processor = Processor(idl().Nimbus, service)

    def start(self) -> NimbusServer:
        for listener in self.listeners:
            listener.thread.start()
        return self

    def close(self) -> None:
        self.closed.set()
        for listener in self.listeners:
            listener.close()
