package org.tornadomla;

/**
 * The one error type of the library for bad input: wrong shapes, unknown dtypes, corrupt files, invalid
 * configs, a full cache. The message names what was expected and what was found.
 */
public class MlaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MlaException(String message) {
        super(message);
    }

    public MlaException(String message, Throwable cause) {
        super(message, cause);
    }

    /** "[2, 3, 4]" for error messages. */
    public static String shape(long... dims) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < dims.length; i++) {
            if (i > 0) sb.append(", ");
            sb.append(dims[i]);
        }
        return sb.append(']').toString();
    }

    public static String shape(int... dims) {
        long[] l = new long[dims.length];
        for (int i = 0; i < dims.length; i++) l[i] = dims[i];
        return shape(l);
    }
}
