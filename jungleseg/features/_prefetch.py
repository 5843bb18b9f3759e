"""A cache hint for kernels whose reads fall all over a store too large for the caches."""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the processor to bring ``array[index]`` (a 1-D array, an integer index) into its
    level-2 cache, without waiting for it (LLVM's ``prefetch`` intrinsic: a read, locality
    2). A hint that never faults and changes no result: a kernel that knows where its next
    reads fall gets them under way without holding up its own instructions, where a load
    that misses blocks retirement once the reorder buffer fills."""
    if not (isinstance(array, types.Array) and array.ndim == 1
            and isinstance(index, types.Integer)):
        return None
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        address = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(8).as_pointer())
        int32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [address.type, int32, int32, int32]),
            "llvm.prefetch." + address.type.intrinsic_name)
        # read (0), locality 2 (the level-2 cache), data (1)
        builder.call(function, [address, int32(0), int32(2), int32(1)])
        return context.get_dummy_value()

    return sig, codegen
