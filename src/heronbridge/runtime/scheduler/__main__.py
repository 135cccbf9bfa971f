"""`python -m heronbridge.runtime.scheduler`: a detached local supervisor."""

import sys

from .local import main

sys.exit(main())
