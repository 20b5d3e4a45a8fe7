"""The cyclic garbage collector paused while a model is built (lakewide.compiler.trees.collection)."""

from __future__ import annotations

import gc
import threading

from lakewide.compiler.trees.collection import collection_paused


def test_paused_inside_and_resumed_by_the_last_caller_to_leave() -> None:
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer caller is still inside
    assert gc.isenabled()


def test_a_collector_paused_before_stays_paused() -> None:
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_concurrent_callers_resume_it_once_all_have_left() -> None:
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collection_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    with collection_paused():
        pass
    assert not gc.isenabled()  # the other thread is still building
    leave.set()
    thread.join(10)
    assert gc.isenabled()
