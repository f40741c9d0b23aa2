"""gcpause.gc_paused: the collector off in the block, then as it was before, whatever
happens in the block (the OTLP reader and every renderer use it)."""

from __future__ import annotations

import gc

import pytest

from agent_eval.gcpause import gc_paused


def test_the_collector_is_off_in_the_block_and_on_again_after() -> None:
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_in_the_block_restores_it() -> None:
    gc.enable()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("x")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    """run turns it off for its start-up: a pause inside must not turn it on."""
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
