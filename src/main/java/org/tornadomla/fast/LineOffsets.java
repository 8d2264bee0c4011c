package org.tornadomla.fast;

import java.lang.management.ManagementFactory;

/**
 * Where a float array starts within a 64-byte cache line, in the one case the JVM lets that be known without
 * reading an address: an array that G1 (the JVM's default collector) allocates as a humongous object, at least
 * half a heap region long, begins at the start of its region, so its element 0 lies the array's header past a
 * line. A latent cache of DeepSeek-V3's rows at thousands of tokens is such an array (9.4 MB at 4096 tokens;
 * regions are 1–32 MB, 4 MB on a heap of a few GB).
 *
 * <p>Why it matters: a 512-bit load that starts inside a line reads two lines. The values kernels load K's rows as
 * vectors, and rows of 576 floats (2304 bytes, 36 lines) all start at the same offset within a line as the array's
 * first element, 16 bytes past it with the JVM's usual header: every vector load straddles two lines. Alone on one
 * Zen 5 core over a 128-row run in L2, the 128-head values ran at 169–174 GFLOP/s with the rows 16, 32 or 48 bytes
 * past a line and 186–192 with them on one (docs/cpu-kernels.md §7). {@link Gemm#values32} starts its vectors at the
 * first column on a line where this class knows the offset.
 *
 * <p>Known only with G1, for arrays of at least half a region, where the header's size follows from the JVM's flags
 * (16 bytes; 12 with compact object headers, 20 without compressed class pointers). Elsewhere {@link #of} says
 * {@link #UNKNOWN} and the kernels run as before; a wrong answer would cost speed, never a different result.
 * {@code -Dtornadomla.fast.lineAligned=false} turns it off (A/B runs).
 */
final class LineOffsets {
    private LineOffsets() {
    }

    /** What {@link #of} says where the offset is not known. */
    static final int UNKNOWN = -1;

    /** Floats from a line's start to element 0 of a humongous float array, or UNKNOWN (not G1, no flags, switched off). */
    static final int HUMONGOUS_START;
    /** The smallest float array (its length) that G1 allocates humongous: half a region, header included. */
    static final long HUMONGOUS_LENGTH;

    static {
        int start = UNKNOWN;
        long length = Long.MAX_VALUE;
        if (!"false".equals(System.getProperty("tornadomla.fast.lineAligned"))) {
            try {
                var flags = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
                long region = Long.parseLong(flags.getVMOption("G1HeapRegionSize").getValue());
                if (Boolean.parseBoolean(flags.getVMOption("UseG1GC").getValue()) && region > 0) {
                    int header = Boolean.parseBoolean(flags.getVMOption("UseCompactObjectHeaders").getValue()) ? 12
                            : Boolean.parseBoolean(flags.getVMOption("UseCompressedClassPointers").getValue()) ? 16 : 20;
                    start = header / Float.BYTES;
                    length = (region / 2 - header + Float.BYTES - 1) / Float.BYTES;
                }
            } catch (Throwable e) {
                // no java.management / jdk.management in the module graph, another JVM, a flag it does not have:
                // the offset stays unknown and the kernels run as they would without it
                start = UNKNOWN;
                length = Long.MAX_VALUE;
            }
        }
        HUMONGOUS_START = start;
        HUMONGOUS_LENGTH = length;
    }

    /** Floats from the start of a 64-byte line to a[0] (0 … 15), or {@link #UNKNOWN}. */
    static int of(float[] a) {
        return HUMONGOUS_START != UNKNOWN && a.length >= HUMONGOUS_LENGTH ? HUMONGOUS_START : UNKNOWN;
    }

    /** For the kernels' line: "rows read from their first column on a 64-byte line (…)" or why not. */
    static String describe() {
        return HUMONGOUS_START != UNKNOWN
                ? "values' vectors from 64-byte lines in caches of " + HUMONGOUS_LENGTH * Float.BYTES / 1024 + " KB or more"
                : "values' vectors where the rows lie (line offsets not known: " + ("false".equals(System.getProperty("tornadomla.fast.lineAligned")) ? "-D" : "not G1") + ")";
    }
}
