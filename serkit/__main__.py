"""`python -m serkit` runs the CLI."""

import signal
import sys

# Before anything is imported: a Ctrl-C while serkit loads stops it too, even where the
# process inherited SIGINT ignored (serkit.cli.main then owns both signals to the end).
signal.signal(signal.SIGINT, signal.default_int_handler)

from serkit.cli import main  # noqa: E402

sys.exit(main())
