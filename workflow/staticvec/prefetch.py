"""Software prefetch for numba kernels that update rows picked at random (used by GloVe's AdaGrad
loop; the negative-sampling core was measured bound by its projections, not by these loads).

Such kernels wait on memory, not arithmetic: each GloVe entry reads and writes four rows of 300
floats (w_i, w̃_j and their accumulators) that are rarely in cache once the vocabulary's parameters
outgrow L2, and the hardware prefetcher cannot guess the next row. :func:`prefetch_row`, called
for the rows of an entry a few entries ahead, lets those loads overlap the current entry's
arithmetic. It is a hint: it changes no value, only when the cache lines arrive.
"""

from __future__ import annotations

import numba
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

CACHE_LINE = 64  # bytes, on every x86-64 and arm64 CPU this runs on


@intrinsic
def prefetch(typingctx, array, row, column):
    """``llvm.prefetch`` of ``array[row, column]``'s cache line (read, keep in all cache levels)."""
    if not (isinstance(array, types.Array) and array.ndim == 2
            and isinstance(row, types.Integer) and isinstance(column, types.Integer)):
        return None
    signature = types.void(array, row, column)

    def codegen(context, builder, sig, args):
        array_type = sig.args[0]
        data = context.make_array(array_type)(context, builder, args[0])
        index = [context.cast(builder, value, typ, types.intp) for value, typ in zip(args[1:], sig.args[1:])]
        pointer = cgutils.get_item_pointer(context, builder, array_type, data, index, wraparound=False)
        byte_pointer = builder.bitcast(pointer, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        # llvmlite mangles the name for the pointer type of its LLVM (p0i8 typed, p0 opaque)
        function = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_pointer.type], ir.FunctionType(ir.VoidType(), [byte_pointer.type, i32, i32, i32]))
        # (address, 0 = read, 3 = high temporal locality, 1 = data cache)
        builder.call(function, [byte_pointer, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return signature, codegen


@numba.njit(inline="always")
def prefetch_row(array, row):
    """Prefetch every cache line of ``array[row]`` (a C-contiguous 2-D array)."""
    step = max(1, CACHE_LINE // array.itemsize)
    for column in range(0, array.shape[1], step):
        prefetch(array, row, column)
