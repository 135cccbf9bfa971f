"""Where topologies live on a host: their working folders, and their state unless another
location is named (`zk://HOST:PORT/ROOT`). Every scheduler, and every front door that
talks to them, starts from a Home."""

from __future__ import annotations

import contextlib
import getpass
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from ..errors import SchedulerError
from ..statemgr import ZK_DIGEST_ENV, StateManager, open_statemgr

STATE_ENV = "HERONBRIDGE_STATE"


def default_home() -> Path:
    return Path(os.environ.get("HERONBRIDGE_HOME", Path.home() / ".heronbridge"))


def default_state() -> str | None:
    """The state location from $HERONBRIDGE_STATE; None: the home's own folder."""
    return os.environ.get(STATE_ENV) or None


@dataclass(frozen=True)
class Home:
    """Where topologies keep their working directories, and their state unless
    `state` names another location (`zk://HOST:PORT/ROOT`)."""

    root: Path
    state: str | None = None

    @property
    def state_uri(self) -> str:
        return self.state or str(self.root / "state")

    def workdir(self, topology: str) -> Path:
        return self.root / "topologies" / topology / "current"

    def ensure(self) -> Path:
        """The home folder, made if missing, and its owner's only (0700: the topologies'
        code, logs and metrics under it are nobody else's business)."""
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = self.root.stat()
            if info.st_uid != os.getuid():
                msg = (f"the heronbridge home {self.root} belongs to uid {info.st_uid}, not "
                       f"to this user ({os.getuid()}); choose another (--home)")
                raise SchedulerError(msg)
            if info.st_mode & 0o077:
                os.chmod(self.root, 0o700)
        except OSError as exc:
            msg = f"cannot make the heronbridge home {self.root}: {exc}"
            raise SchedulerError(msg) from exc
        return self.root

    def open_statemgr(self) -> StateManager:
        self.ensure()
        credential = None
        if self.state_uri.startswith("zk://") and not os.environ.get(ZK_DIGEST_ENV):
            credential = self.zookeeper_identity()
        return open_statemgr(self.state_uri, credential)

    def zookeeper_identity(self) -> str:
        """The digest identity this home writes ZooKeeper nodes under, made once (0600);
        $HERONBRIDGE_ZK_DIGEST names another, e.g. one shared by the hosts of a cluster."""
        path = self.root / "zookeeper-digest"
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(f"{getpass.getuser()}:{secrets.token_urlsafe(24)}\n")
            return path.read_text().strip()
        except OSError as exc:
            msg = f"cannot read or make the ZooKeeper identity {path}: {exc}"
            raise SchedulerError(msg) from exc
