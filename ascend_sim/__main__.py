"""``python -m ascend_sim``: the ascend-sim command line (grade, solve, clean, demo)."""
from ascend_sim.tools.cli import main

raise SystemExit(main())
