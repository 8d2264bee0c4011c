package org.tornadomla.weights;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;

import java.util.Arrays;

/** One tensor of a safetensors file: dtype, shape and its byte range [begin, end) in the data section. */
public record TensorInfo(String name, DType dtype, long[] shape, long begin, long end) {
    /** Keeps a copy of the shape. */
    public TensorInfo {
        shape = shape.clone();
    }

    /** A copy of the shape. */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** The element count (a file's tensors are checked to fit their byte range, so this never overflows for them). */
    public long numel() {
        for (long d : shape) if (d == 0) return 0;
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        return n;
    }

    /** The shape as {@code [a, b]}. */
    public String shapeString() {
        return Messages.shape(shape);
    }

    /** Throws naming the tensor, the expected and the found shape unless the shape is {@code expected}. */
    public void requireShape(long... expected) {
        if (!Arrays.equals(shape, expected)) {
            throw new MlaException("tensor " + Messages.quote(name) + ": expected shape " + Messages.shape(expected)
                    + ", found " + shapeString());
        }
    }

    @Override
    public String toString() {
        return Messages.quote(name) + " " + dtype + " " + shapeString();
    }
}
