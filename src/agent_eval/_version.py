__version__ = "0.1.0"

# The GitHub repository the project is published from (OWNER/NAME): users write
# `uses: agent-eval/agent-eval@v1`, and SARIF's tool and rule links and the JSON Schemas'
# $id point into it. `scripts/release.py check-version` refuses a release from another
# repository, or whose README.md and examples/workflows/ name another one.
REPOSITORY = "agent-eval/agent-eval"
