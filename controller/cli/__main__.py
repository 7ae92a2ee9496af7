"""``python -m controller.cli``: the same entry point as the ``tablectl`` console script."""

import sys

from controller.cli import main

sys.exit(main())
