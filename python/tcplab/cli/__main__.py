"""``python -m tcplab.cli`` is the ``tcplab`` command (as ``python -m tcplab``)."""

import sys

from . import main

sys.exit(main())
