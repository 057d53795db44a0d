"""`python -m robokin_ros.tools.robokin_cli` runs the `robokin` command."""
import sys

from robokin_ros.tools.robokin_cli import main

sys.exit(main())
