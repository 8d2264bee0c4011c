package org.tornadomla.internal;

import org.tornadomla.MlaException;

/**
 * Checks that an allocation fits the JVM's heap before it is made, so that a request too large for this
 * machine is an {@link MlaException} naming what needs the memory, not an {@code OutOfMemoryError} half-way.
 */
public final class Memory {
    private Memory() {
    }

    /** Largest Java array length this library allocates. */
    public static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    /** Throws unless about {@code bytes} more bytes fit in the heap now. */
    public static void require(long bytes, String what) {
        if (bytes < 0) throw new MlaException(what + ": more than " + Long.MAX_VALUE + " bytes needed");
        if (bytes <= available()) return;
        System.gc();                    // "used" counted garbage too; ask once more after a collection
        long free = available();
        if (bytes > free) {
            // "what: N MB needed": what may be singular or plural ("a copy of weight x", "layer 0's weights as f32")
            throw new MlaException(what + ": " + mb(bytes) + " MB needed, the JVM has about " + mb(free) + " MB free of "
                    + mb(Runtime.getRuntime().maxMemory()) + " MB (give the JVM a larger heap with -Xmx, for ./mla MLA_JAVA_OPTS=-Xmx16g, or ask for less)");
        }
    }

    /** Throws unless {@code count} elements fit in one Java array; returns it as an int. */
    public static int arrayLength(long count, String what) {
        if (count < 0 || count > MAX_ARRAY) {
            throw new MlaException(what + " would hold " + count + " numbers, more than one Java array holds (" + MAX_ARRAY + ")");
        }
        return (int) count;
    }

    private static long available() {
        Runtime rt = Runtime.getRuntime();
        return rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
    }

    private static long mb(long bytes) {
        return (bytes + (1 << 20) - 1) >> 20;
    }
}
