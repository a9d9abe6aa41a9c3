"""`python -m approxnet.testbed.traffic`."""

import sys

from .cli import main

sys.exit(main())
