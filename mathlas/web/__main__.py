"""``python -m mathlas.web serve ...``: the serve command on its own."""
import sys

from mathlas.extras import exit_unless

exit_unless("serve", "python -m mathlas.web")

from mathlas.cli.serve import main  # noqa: E402 - only once the extra is known to be there

sys.exit(main())
