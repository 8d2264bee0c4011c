package org.tornadomla.weights;

import org.tornadomla.MlaException;

import java.util.Arrays;

/** One tensor of a safetensors file: dtype, shape and its byte range [begin, end) in the data section. */
public record TensorInfo(String name, DType dtype, long[] shape, long begin, long end) {

    public long numel() {
        long n = 1;
        for (long d : shape) n = Math.multiplyExact(n, d);
        return n;
    }

    public String shapeString() {
        return MlaException.shape(shape);
    }

    /** Throws naming the tensor, the expected and the found shape unless the shape is {@code expected}. */
    public void requireShape(long... expected) {
        if (!Arrays.equals(shape, expected)) {
            throw new MlaException("tensor '" + name + "': expected shape " + MlaException.shape(expected)
                    + ", found " + shapeString());
        }
    }

    @Override
    public String toString() {
        return name + " " + dtype + " " + shapeString();
    }
}
