"""``python -m counterfact.cli``."""

import sys

from . import main

sys.exit(main())
