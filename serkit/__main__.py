"""`python -m serkit` runs the CLI."""

import sys

from serkit.cli import main

sys.exit(main())
