"""``python -m jungleseg.cli``: the ``jungleseg`` command."""
import sys

from . import main

sys.exit(main())
