"""``python -m workbench.conformance [--backend NAME] [--via-language] PATH...``."""

import sys

from workbench.conformance.runner import main

sys.exit(main())
