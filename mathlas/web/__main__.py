"""``python -m mathlas.web serve ...``: the serve command on its own."""
import sys

from mathlas.cli.serve import main

sys.exit(main())
