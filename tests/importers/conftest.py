"""The importers' judge tests use the judge tests' loopback provider servers."""

from tests.judge.loopback import anthropic_server, openai_server

__all__ = ["anthropic_server", "openai_server"]
