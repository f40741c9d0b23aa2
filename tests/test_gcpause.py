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


def test_pauses_nest() -> None:
    gc.enable()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still runs
    assert gc.isenabled()


def test_overlapping_pauses_in_two_threads_end_together() -> None:
    """Two evaluations in two threads (the collector is one per process): the first pause
    to end does not turn the collector on under the other, which turns it on at its end."""
    import threading

    gc.enable()
    first_in, second_in, first_out = (threading.Event(), threading.Event(),
                                      threading.Event())
    seen: dict[str, bool] = {}

    def second() -> None:
        assert first_in.wait(5)
        with gc_paused():
            second_in.set()
            assert first_out.wait(5)  # the first pause has ended by now
            seen["after the first ended"] = gc.isenabled()
        seen["after both"] = gc.isenabled()

    thread = threading.Thread(target=second)
    thread.start()
    with gc_paused():
        first_in.set()
        assert second_in.wait(5)
    first_out.set()
    thread.join(5)
    assert not thread.is_alive()
    assert seen == {"after the first ended": False, "after both": True}
