"""`python3 -m vrqbench ARGS` is `bench/bench ARGS` (bench/bench runs this with the repository's PYTHONPATH)."""
import sys

from vrqbench.cli import main

sys.exit(main())
