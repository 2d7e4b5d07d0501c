"""``python -m mathlas.web serve ...``: the serve command on its own."""
import sys

from mathlas.web.cli import main

sys.exit(main())
