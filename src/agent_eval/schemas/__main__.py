import sys

from agent_eval.schemas import main

raise SystemExit(main(sys.argv[1:]))
