"""Component config keys the heronpy loader sets and the host reads.

Like every `heronbridge.*` key, they never reach the hosted component's config.
"""

CLASS = "heronbridge.heronpy.class"  # the user's "module.Class", as heronpy's spec names it
RESOURCES = "heronbridge.heronpy.resources"  # a project's copy of src/: the working folder
# {component: [[source, stream, gtype], ...]}: every component's inputs, for get_sources
INPUTS = "heronbridge.heronpy.inputs"
# On a source component: {bolt: {stream: base64 of the pickled ICustomGrouping}}
CUSTOM_GROUPINGS = "heronbridge.heronpy.custom.groupings"
# A config value heronpy stored pickled (PYTHON_SERIALIZED_VALUE): {PICKLED: base64}
PICKLED = "heronbridge.heronpy.pickled"

PREFIX = "heronbridge."

# The environment variable naming heronpy's definition-file folder (`heron submit` sets
# it): creating a Topology class needs it, in the loader and in a task alike.
HERON_OPTIONS = "HERON_OPTIONS"
