"""``python -m mathlas``: the ``mathlas`` command."""
import sys

from mathlas.cli.main import main

sys.exit(main())
