"""``python -m mathlas.web serve ...``: the serve command on its own."""
import sys

from mathlas.extras import MissingExtra, require

try:
    require("serve", "python -m mathlas.web")
except MissingExtra as e:
    print(f"mathlas: {e}", file=sys.stderr)
    sys.exit(2)

from mathlas.cli.serve import main  # noqa: E402 - only once the extra is known to be there

sys.exit(main())
