"""Where migrated code imports what heronpy lacks: the helpers the codemod's rewrites call
(`storm_conf`, `storm_context`, `unported`, the Shell and Java stand-ins) and pystorm's
extras (`BatchingBolt`, `TicklessBatchingBolt`, `ReliableSpout`) on heronpy's classes."""

HELPERS = "heronbridge.shims.heronpy.migrated"
EXTRAS = "heronbridge.shims.heronpy.extras"
