"""Storm's spout and bolt API (pystorm and streamparse semantics) on the runtime.

Python components run in-process under pystorm's own loop (inprocess.py); any other
multilang program, or a Python component when asked, runs as a subprocess speaking
Storm's multilang protocol over pipes (subprocess.py). Both talk to the runtime through
StormPeer, Storm's side of the protocol (shared with the heronpy host's hooks: common/).
"""


from .. import ShimError

__all__ = ["ShimError"]
