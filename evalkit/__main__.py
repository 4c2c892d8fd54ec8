"""`python -m evalkit`: the same command line as `evalkit` (`evalkit.cli.main`)."""

import sys

from evalkit.cli import main

sys.exit(main())
