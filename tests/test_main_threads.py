"""``python -m sim`` holds numpy's and SciPy's BLAS to one thread before numpy loads,
unless the user set a count (issue 36: idle BLAS threads spin)."""

from __future__ import annotations

from sim.__main__ import BLAS_THREADS, one_blas_thread


def test_blas_is_held_to_one_thread_where_the_user_set_no_count() -> None:
    environ: dict[str, str] = {"PATH": "/usr/bin"}
    one_blas_thread(environ)
    assert environ == {"PATH": "/usr/bin", "OPENBLAS_NUM_THREADS": "1"}
    assert BLAS_THREADS == {"OPENBLAS_NUM_THREADS": "1"}


def test_a_count_the_user_set_wins() -> None:
    environ = {"OPENBLAS_NUM_THREADS": "4"}
    one_blas_thread(environ)
    assert environ == {"OPENBLAS_NUM_THREADS": "4"}
