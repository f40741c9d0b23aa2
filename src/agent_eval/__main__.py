from agent_eval._cli import main

raise SystemExit(main())
