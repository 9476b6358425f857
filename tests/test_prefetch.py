"""The prefetch hint for numba kernels: it compiles for the kernels' arrays, changes nothing, and
really emits the CPU's prefetch instruction."""

import platform

import numba
import numpy as np
import pytest

from staticvec.prefetch import prefetch_row


@numba.njit
def _sum_after_prefetch(array, row):
    prefetch_row(array, row)
    return array[row].sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_prefetch_changes_no_value(dtype):
    array = np.arange(3 * 301, dtype=dtype).reshape(3, 301)
    before = array.copy()
    assert _sum_after_prefetch(array, 2) == array[2].sum()
    np.testing.assert_array_equal(array, before)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 instruction names")
def test_prefetch_emits_the_prefetch_instruction():
    _sum_after_prefetch(np.ones((2, 64), np.float32), 1)
    assembly = "\n".join(_sum_after_prefetch.inspect_asm().values())
    assert "prefetcht0" in assembly


def test_prefetch_of_a_vector_is_a_typing_error():
    with pytest.raises(numba.core.errors.TypingError):
        _sum_after_prefetch(np.ones(5, np.float32), 1)
