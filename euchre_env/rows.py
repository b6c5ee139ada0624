"""Array views without a reference count, for the batched loops: `row_view(matrix, g)` and `unowned(array)`;
and `stack_array(size, dtype)`, a small scratch array on the calling kernel's stack.

A compiled kernel that binds or passes on an array (a `matrix[g]` view, the rules table, an output
array) makes numba increment and decrement the array's reference count, an atomic instruction each;
in the batched loops over games that was 40% of a decision's time. The views made here have no owner,
so those updates do nothing. A view is valid only while the array it looks into is alive, so it must
not outlive the kernel call that made it: keep it in local variables, never return or store it.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _populate(context, builder, out_type, data, shape, strides):
    out = context.make_array(out_type)(context, builder)
    itemsize = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(out_type.dtype)))
    context.populate_array(out, data=data, shape=shape, strides=strides, itemsize=itemsize, meminfo=None)
    return out._getvalue()


@intrinsic
def row_view(typingctx, matrix, index):
    """Row `index` of the C-contiguous 2-D `matrix` as a 1-D array without a reference (module docstring)."""
    if not (isinstance(matrix, types.Array) and matrix.ndim == 2 and matrix.layout == "C"):
        return None
    if not isinstance(index, types.Integer):
        return None
    out_type = types.Array(matrix.dtype, 1, "C")

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        at = context.cast(builder, args[1], signature.args[1], types.intp)
        _, width = cgutils.unpack_tuple(builder, source.shape, 2)
        _, step = cgutils.unpack_tuple(builder, source.strides, 2)
        data = builder.gep(source.data, [builder.mul(at, width)])
        return _populate(context, builder, out_type, data, (width,), (step,))

    return out_type(matrix, index), codegen


@intrinsic
def unowned(typingctx, array):
    """The same array (data, shape, strides) without a reference (module docstring)."""
    if not isinstance(array, types.Array):
        return None
    out_type = array

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, source.shape, array.ndim)
        strides = cgutils.unpack_tuple(builder, source.strides, array.ndim)
        return _populate(context, builder, out_type, source.data, shape, strides)

    return out_type(array), codegen


@intrinsic
def stack_array(typingctx, size, dtype):
    """A 1-D array of `size` (a compile-time constant) uninitialised `dtype` elements on the stack of the
    kernel that calls this: no allocation. Valid until that kernel returns: never return or store it."""
    if not isinstance(size, types.IntegerLiteral) or not isinstance(dtype, (types.NumberClass, types.DType)):
        return None
    element = dtype.dtype if isinstance(dtype, types.DType) else dtype.instance_type
    out_type = types.Array(element, 1, "C")

    def codegen(context, builder, signature, args):
        count = size.literal_value
        data = cgutils.alloca_once(builder, context.get_data_type(element), size=count)
        itemsize = context.get_abi_sizeof(context.get_data_type(element))
        shape = (context.get_constant(types.intp, count),)
        strides = (context.get_constant(types.intp, itemsize),)
        return _populate(context, builder, out_type, data, shape, strides)

    return out_type(size, dtype), codegen
