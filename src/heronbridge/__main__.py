import sys

from heronbridge.cli import main

sys.exit(main())
