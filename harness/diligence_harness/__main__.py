"""Entry point for `python -m diligence_harness` and for the zipapp."""

import sys

from diligence_harness.cli import main

if __name__ == "__main__":
    sys.exit(main())
