package org.tornadomla.weights;

import org.tornadomla.internal.Messages;
import org.tornadomla.internal.Memory;
import org.tornadomla.MlaException;
import org.tornadomla.graph.KernelGraph;
import org.tornadomla.kernels.Absorb;
import org.tornadomla.kernels.Bf16;
import org.tornadomla.kernels.Dequantize;
import org.tornadomla.kernels.Fp8;
import org.tornadomla.kernels.Projections;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;

/**
 * One weight tensor of a layer, immutable, held in one of the {@link WeightDtype} forms: f32 numbers, bf16
 * bit patterns, or DeepSeek's block-scaled FP8 (e4m3 codes [rows, cols] and one f32 multiplier per 128 × 128
 * block, [ceil(rows/128), ceil(cols/128)]; W[i, j] = e4m3(code[i, j])·scale[i/128, j/128] rounded once to f32).
 *
 * <p>Nothing here hands out the storage: readers get a dequantised copy ({@link #toFloats()}) or a converted
 * weight ({@link #to}); factories copy what they are given, and {@link #asF32} returns a copy. The storage
 * reaches kernels only as WEIGHT buffers of a {@link KernelGraph} (whose buffers belong to the executor that
 * runs it, never to be written; {@code MlaLayer} hands out only copies of its graphs' weights), each graph
 * with its own power-of-two table, through
 * the methods that add a task using the weight ({@link #project}, {@link #absorbQuery}, {@link #unabsorbValue},
 * {@link #asF32}); each picks the kernel for the weight's form, so the layer's dataflow does not change with it. Every
 * weight is checked when made: the right number of values, all finite (no NaN or infinite f32 or bf16
 * values, no e4m3 NaN code 0x7F/0xFF), scales finite, not negative and small enough that 448·scale is finite.
 */
public final class Weight {
    /** The power-of-two table host code here decodes with; never handed out. */
    private static final float[] POW2 = Bf16.pow2();
    /**
     * Each graph's own copy of the table its bf16 and fp8 tasks decode with: a caller that writes one graph's
     * buffers changes that graph only, never the weights of another graph or layer. Keys are held weakly.
     */
    private static final Map<KernelGraph, float[]> TABLES = Collections.synchronizedMap(new WeakHashMap<>());

    private final String name;
    private final long[] shape;
    private final WeightDtype dtype;
    private final float[] f32;
    private final short[] bf16;
    private final byte[] codes;
    private final float[] scales;

    private Weight(String name, long[] shape, WeightDtype dtype, float[] f32, short[] bf16, byte[] codes, float[] scales) {
        this.name = name;
        this.shape = shape;
        this.dtype = dtype;
        this.f32 = f32;
        this.bf16 = bf16;
        this.codes = codes;
        this.scales = scales;
    }

    // ------------------------------------------------------------------ making weights

    /** An f32 weight of {@code shape} ([out, in] or [n]) holding a copy of {@code values}. */
    public static Weight f32(String name, long[] shape, float[] values) {
        return ofF32(name, shape, Objects.requireNonNull(values, "values").clone());
    }

    /** A bf16 weight of {@code shape} holding a copy of the bit patterns {@code bits}. */
    public static Weight bf16(String name, long[] shape, short[] bits) {
        return ofBf16(name, shape, Objects.requireNonNull(bits, "bits").clone());
    }

    /**
     * A block-scaled FP8 weight [rows, cols]: a copy of the e4m3 {@code codes} (row-major) and of
     * {@code scales} [ceil(rows/128), ceil(cols/128)], the checkpoint's {@code weight_scale_inv}.
     */
    public static Weight fp8(String name, long rows, long cols, byte[] codes, float[] scales) {
        return ofFp8(name, rows, cols, Objects.requireNonNull(codes, "codes").clone(), Objects.requireNonNull(scales, "scales").clone());
    }

    /** Takes {@code values} without a copy (the caller made them and lets go of them). */
    static Weight ofF32(String name, long[] shape, float[] values) {
        long[] s = checkShape(name, shape, values.length);
        for (int i = 0; i < values.length; i++) {
            if (!Float.isFinite(values[i])) {
                throw new MlaException("weight " + Messages.quote(name) + " holds " + values[i] + " at " + index(s, i) + "; weights must be finite");
            }
        }
        return new Weight(name, s, WeightDtype.F32, values, null, null, null);
    }

    static Weight ofBf16(String name, long[] shape, short[] bits) {
        long[] s = checkShape(name, shape, bits.length);
        for (int i = 0; i < bits.length; i++) {
            if ((bits[i] & 0x7F80) == 0x7F80) {
                throw new MlaException("weight " + Messages.quote(name) + " holds " + Bf16Bits.decode(bits[i]) + " at " + index(s, i)
                        + " as bf16; weights must be finite");
            }
        }
        return new Weight(name, s, WeightDtype.BF16, null, bits, null, null);
    }

    static Weight ofFp8(String name, long rows, long cols, byte[] codes, float[] scales) {
        long[] s = checkShape(name, new long[] {rows, cols}, codes.length);
        long[] scaleShape = scaleShape(rows, cols);
        if (scales.length != scaleShape[0] * scaleShape[1]) {
            throw new MlaException("weight " + Messages.quote(name) + " " + Messages.shape(s) + ": expected "
                    + Messages.shape(scaleShape) + " block scales (" + scaleShape[0] * scaleShape[1] + "), found " + scales.length);
        }
        for (int i = 0; i < codes.length; i++) {
            if ((codes[i] & 0x7F) == 0x7F) {
                throw new MlaException("weight " + Messages.quote(name) + " holds the e4m3 NaN code 0x" + Integer.toHexString(codes[i] & 0xFF)
                        + " at " + index(s, i) + "; weights must be finite");
            }
        }
        for (int i = 0; i < scales.length; i++) {
            float v = scales[i];
            if (!(v >= 0) || !Float.isFinite(v * Fp8.MAX)) {
                throw new MlaException("weight " + Messages.quote(name) + ": block scale " + v + " at " + index(scaleShape, i)
                        + " must be finite, not negative and at most " + Float.MAX_VALUE / Fp8.MAX + " (448·scale must be a finite float)");
            }
        }
        return new Weight(name, s, WeightDtype.FP8, null, null, codes, scales);
    }

    /**
     * Reads tensor {@code name} of {@code src}, which must have {@code shape}, in its own form: an F8_E4M3
     * matrix with its block scales {@code <name>_scale_inv} (F32 [ceil(rows/128), ceil(cols/128)]; missing,
     * wrong-shaped or mistyped scales are refused naming both tensors and shapes) as FP8; F32, BF16, F16 and
     * F64 as f32. Block scales beside a weight that is not F8_E4M3 are refused: it would be read without them.
     */
    public static Weight read(TensorSource src, String name, long... shape) {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(name, "name");
        TensorInfo info = src.info(name);
        if (info == null) throw new MlaException("missing tensor " + Messages.quote(name) + " (expected shape " + Messages.shape(shape) + ")");
        info.requireShape(shape);
        if (info.dtype() == DType.F8_E4M3) {
            if (shape.length != 2) throw new MlaException("tensor " + Messages.quote(name) + ": F8_E4M3 with block scales needs a matrix, found " + info.shapeString());
            return ofFp8(name, shape[0], shape[1], src.readBytes(name, DType.F8_E4M3), readScales(src, name, info));
        }
        if (!info.dtype().isFloat()) {
            throw new MlaException("tensor " + Messages.quote(name) + ": dtype " + info.dtype()
                    + " is not read (expected F8_E4M3 with block scales, or F32, BF16, F16, F64)");
        }
        if (src.info(name + "_scale_inv") != null) {
            throw new MlaException("tensor " + Messages.quote(name + "_scale_inv") + ": block scales belong to F8_E4M3 weights, but "
                    + Messages.quote(name) + " is " + info.dtype() + " (a partly converted checkpoint?)");
        }
        return ofF32(name, shape, src.readFloats(name));
    }

    private static float[] readScales(TensorSource src, String name, TensorInfo weight) {
        String sn = name + "_scale_inv";
        long[] shape = weight.shape(), expected = scaleShape(shape[0], shape[1]);
        TensorInfo s = src.info(sn);
        String of = " (128x128 block scales of F8_E4M3 weight " + Messages.quote(name) + " " + weight.shapeString() + ")";
        if (s == null) throw new MlaException("missing tensor " + Messages.quote(sn) + ": expected F32 " + Messages.shape(expected) + of);
        if (!java.util.Arrays.equals(s.shape(), expected)) {
            throw new MlaException("tensor " + Messages.quote(sn) + ": expected shape " + Messages.shape(expected) + of + ", found " + s.shapeString());
        }
        if (s.dtype() != DType.F32) throw new MlaException("tensor " + Messages.quote(sn) + ": expected dtype F32" + of + ", found " + s.dtype());
        return src.readFloats(sn);
    }

    /** The shape of the block scales of a [rows, cols] FP8 weight: [ceil(rows/128), ceil(cols/128)]. */
    public static long[] scaleShape(long rows, long cols) {
        return new long[] {(rows + Fp8.WEIGHT_BLOCK - 1) / Fp8.WEIGHT_BLOCK, (cols + Fp8.WEIGHT_BLOCK - 1) / Fp8.WEIGHT_BLOCK};
    }

    private static long[] checkShape(String name, long[] shape, int length) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(shape, "shape");
        long[] s = shape.clone();
        if (s.length < 1 || s.length > 2) throw new MlaException("weight " + Messages.quote(name) + ": expected a matrix or a vector, found shape " + Messages.shape(s));
        long n = 1;
        for (long d : s) {
            if (d < 1) throw new MlaException("weight " + Messages.quote(name) + ": shape " + Messages.shape(s) + " has a dimension < 1");
            n = d > Memory.MAX_ARRAY || n > Memory.MAX_ARRAY / d ? Long.MAX_VALUE : n * d;
        }
        if (n != length) {
            throw new MlaException("weight " + Messages.quote(name) + ": expected shape " + Messages.shape(s) + " (" + n
                    + " numbers), found " + length + " numbers");
        }
        return s;
    }

    private static String index(long[] shape, int i) {
        return shape.length == 2 ? "[" + i / shape[1] + ", " + i % shape[1] + "]" : "[" + i + "]";
    }

    // ------------------------------------------------------------------ reading

    /** The tensor's name (a Hugging Face name, e.g. {@code model.layers.0.self_attn.kv_b_proj.weight}). */
    public String name() {
        return name;
    }

    /** A copy of the shape: [out, in] for a projection, [n] for a norm. */
    public long[] shape() {
        return shape.clone();
    }

    /** How the weight is stored. */
    public WeightDtype dtype() {
        return dtype;
    }

    /** Number of values: the product of the shape. */
    public int numbers() {
        return dtype == WeightDtype.F32 ? f32.length : dtype == WeightDtype.BF16 ? bf16.length : codes.length;
    }

    /**
     * Bytes this weight holds, measured from its arrays: their lengths times their element sizes (f32 4, bf16
     * 2, e4m3 1 plus 4 per block scale); the few dozen bytes of object headers are not counted.
     */
    public long bytes() {
        return switch (dtype) {
            case F32 -> 4L * f32.length;
            case BF16 -> 2L * bf16.length;
            case FP8 -> codes.length + 4L * scales.length;
        };
    }

    /** The values as f32, a new array: exact for every form (FP8: e4m3(code)·scale rounded once to f32). */
    public float[] toFloats() {
        float[] out = new float[numbers()];
        switch (dtype) {
            case F32 -> System.arraycopy(f32, 0, out, 0, out.length);
            case BF16 -> {
                for (int i = 0; i < out.length; i++) out[i] = Bf16Bits.decode(bf16[i]);
            }
            case FP8 -> {
                int rows = (int) shape[0], cols = (int) shape[1];
                for (int r = 0; r < rows; r++) {
                    for (int c = 0; c < cols; c++) out[r * cols + c] = Fp8.weight(codes, scales, POW2, r, c, cols);
                }
            }
        }
        return out;
    }

    /**
     * This weight in another form (this weight itself when it is in that form already). To F32 is exact; to
     * BF16 rounds to nearest even (refused if a value overflows bf16); to FP8 quantises each 128 × 128 block
     * with scale = max |w| / 448 (1 for a block of zeros) and codes rounded to nearest even; FP8 needs a matrix.
     */
    public Weight to(WeightDtype target) {
        Objects.requireNonNull(target, "target");
        if (target == dtype) return this;
        if (target == WeightDtype.FP8 && shape.length != 2) {
            throw new MlaException("weight " + Messages.quote(name) + " " + Messages.shape(shape) + ": FP8 block scales need a matrix");
        }
        Memory.require((long) numbers() * (4 + target.bytesPerNumber), "converting weight " + name + " to " + target);
        float[] v = toFloats();
        return switch (target) {
            case F32 -> new Weight(name, shape, WeightDtype.F32, v, null, null, null);
            case BF16 -> {
                short[] b = new short[v.length];
                for (int i = 0; i < v.length; i++) {
                    b[i] = Bf16Bits.encode(v[i]);
                    if ((b[i] & 0x7F80) == 0x7F80) {
                        throw new MlaException("weight " + Messages.quote(name) + " holds " + v[i] + " at " + index(shape, i) + ", beyond bf16's range");
                    }
                }
                yield new Weight(name, shape, WeightDtype.BF16, null, b, null, null);
            }
            case FP8 -> quantise(v);
        };
    }

    private Weight quantise(float[] v) {
        int rows = (int) shape[0], cols = (int) shape[1];
        long[] ss = scaleShape(rows, cols);
        int bc = (int) ss[1];
        float[] s = new float[(int) (ss[0] * ss[1])];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                int k = (r / Fp8.WEIGHT_BLOCK) * bc + c / Fp8.WEIGHT_BLOCK;
                s[k] = Math.max(s[k], Math.abs(v[r * cols + c]));
            }
        }
        for (int k = 0; k < s.length; k++) {
            float scale = s[k] / Fp8.MAX;
            s[k] = s[k] == 0 ? 1f : scale == 0 ? Float.MIN_VALUE : scale;      // a zero block; an amax that underflows
        }
        byte[] q = new byte[v.length];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                q[r * cols + c] = Fp8.encode(v[r * cols + c] / s[(r / Fp8.WEIGHT_BLOCK) * bc + c / Fp8.WEIGHT_BLOCK], POW2);
            }
        }
        return new Weight(name, shape, WeightDtype.FP8, null, null, q, s);
    }

    /**
     * Rows [from, to) of this matrix, in the same form and with the same name: the values are copied, never
     * re-rounded. An FP8 weight keeps the 128 × 128 scale blocks the rows lie in, so {@code from} must start a
     * block (a multiple of 128); {@code to} may end inside one (its scale is the same for every row of it).
     */
    Weight rows(long from, long to) {
        int rows = rows(), cols = cols();
        checkRange("rows", from, to, rows);
        int r0 = (int) from, n = (int) (to - from);
        long[] s = {n, cols};
        return switch (dtype) {
            case F32 -> new Weight(name, s, dtype, java.util.Arrays.copyOfRange(f32, r0 * cols, (r0 + n) * cols), null, null, null);
            case BF16 -> new Weight(name, s, dtype, null, java.util.Arrays.copyOfRange(bf16, r0 * cols, (r0 + n) * cols), null, null);
            case FP8 -> {
                requireBlockStart("row", r0);
                int bc = Fp8.weightBlocks(cols), b0 = r0 / Fp8.WEIGHT_BLOCK, nb = Fp8.weightBlocks(n);
                yield new Weight(name, s, dtype, null, null, java.util.Arrays.copyOfRange(codes, r0 * cols, (r0 + n) * cols),
                        java.util.Arrays.copyOfRange(scales, b0 * bc, (b0 + nb) * bc));
            }
        };
    }

    /**
     * Columns [from, to) of this matrix, in the same form and with the same name (values copied, never
     * re-rounded). FP8: {@code from} must start a 128-column scale block, as for {@link #rows}.
     */
    Weight columns(long from, long to) {
        int rows = rows(), cols = cols();
        checkRange("columns", from, to, cols);
        int c0 = (int) from, n = (int) (to - from);
        long[] s = {rows, n};
        switch (dtype) {
            case F32 -> {
                float[] v = new float[rows * n];
                for (int r = 0; r < rows; r++) System.arraycopy(f32, r * cols + c0, v, r * n, n);
                return new Weight(name, s, dtype, v, null, null, null);
            }
            case BF16 -> {
                short[] v = new short[rows * n];
                for (int r = 0; r < rows; r++) System.arraycopy(bf16, r * cols + c0, v, r * n, n);
                return new Weight(name, s, dtype, null, v, null, null);
            }
            default -> {
                requireBlockStart("column", c0);
                byte[] v = new byte[rows * n];
                for (int r = 0; r < rows; r++) System.arraycopy(codes, r * cols + c0, v, r * n, n);
                int bc = Fp8.weightBlocks(cols), br = Fp8.weightBlocks(rows), b0 = c0 / Fp8.WEIGHT_BLOCK, nb = Fp8.weightBlocks(n);
                float[] sc = new float[br * nb];
                for (int b = 0; b < br; b++) System.arraycopy(scales, b * bc + b0, sc, b * nb, nb);
                return new Weight(name, s, dtype, null, null, v, sc);
            }
        }
    }

    private void checkRange(String what, long from, long to, int n) {
        if (from < 0 || to > n || from >= to) {
            throw new MlaException("weight " + Messages.quote(name) + " " + Messages.shape(shape) + ": " + what + " [" + from + ", " + to
                    + ") are not a non-empty range of 0 … " + n);
        }
    }

    private void requireBlockStart(String what, int at) {
        if (at % Fp8.WEIGHT_BLOCK != 0) {
            throw new MlaException("weight " + Messages.quote(name) + " " + Messages.shape(shape) + " is FP8 with 128x128 block scales: a slice from "
                    + what + " " + at + " would cut a scale block (it must start at a multiple of 128)");
        }
    }

    /** Adds this weight to a safetensors writer under {@code name}: F32, BF16, or F8_E4M3 plus {@code name_scale_inv}. */
    void addTo(SafeTensorsWriter w, String tensorName) {
        switch (dtype) {
            case F32 -> w.add(tensorName, DType.F32, shape, f32);
            case BF16 -> w.add(tensorName, DType.BF16, shape, toFloats());          // bf16 values encode back to the same bits
            case FP8 -> {
                w.addBytes(tensorName, DType.F8_E4M3, shape, codes);
                w.add(tensorName + "_scale_inv", DType.F32, scaleShape(shape[0], shape[1]), scales);
            }
        }
    }

    @Override
    public String toString() {
        return Messages.quote(name) + " " + dtype + " " + Messages.shape(shape);
    }

    // ------------------------------------------------------------------ in a kernel graph

    /** The buffer name of this weight in a graph: its module name, e.g. {@code kv_b_proj}. */
    private String bufferName() {
        String n = name.endsWith(".weight") ? name.substring(0, name.length() - ".weight".length()) : name;
        int at = n.lastIndexOf("self_attn.");
        return at >= 0 ? n.substring(at + "self_attn.".length()) : n;
    }

    private int rows() {
        requireMatrix();
        return (int) shape[0];
    }

    private int cols() {
        requireMatrix();
        return (int) shape[1];
    }

    private void requireMatrix() {
        if (shape.length != 2) throw new MlaException("weight " + Messages.quote(name) + " " + Messages.shape(shape) + " is not a matrix");
    }

    private static void requireLength(String what, float[] a, long expected) {
        Objects.requireNonNull(a, what);
        if (a.length != expected) throw new MlaException(what + ": expected " + expected + " floats, found " + a.length);
    }

    /**
     * Adds task {@code task}: y [tokens, out] = x [tokens, in]·Wᵀ with the {@link Projections} kernel of this
     * weight's form (matrix-vector for one token, matrix-matrix otherwise). The weight's arrays become WEIGHT
     * buffers of {@code g}.
     */
    public void project(KernelGraph g, String task, float[] x, float[] y, int tokens) {
        int out = rows(), in = cols();
        requireLength(task + " input", x, (long) tokens * in);
        requireLength(task + " output", y, (long) tokens * out);
        String b = bufferName();
        switch (dtype) {
            case F32 -> {
                float[] w = g.weight(b, f32);
                if (tokens == 1) g.task(task, Projections::matVec, x, w, y, in, out);
                else g.task(task, Projections::matMul, x, w, y, tokens, in, out);
            }
            case BF16 -> {
                short[] w = g.weight(b, bf16);
                float[] p = pow2(g);
                if (tokens == 1) g.task(task, Projections::matVecBf16, x, w, p, y, in, out);
                else g.task(task, Projections::matMulBf16, x, w, p, y, tokens, in, out);
            }
            case FP8 -> {
                byte[] w = g.weight(b, codes);
                float[] s = g.weight(b + ".scale_inv", scales);
                float[] p = pow2(g);
                if (tokens == 1) g.task(task, Projections::matVecFp8, x, w, s, p, y, in, out);
                else g.task(task, Projections::matMulFp8, x, w, s, p, y, tokens, in, out);
            }
        }
    }

    /**
     * Adds task {@code task}: q_lat = W^UK-absorbed query ({@link Absorb#absorbQuery}) with this weight as
     * kv_b_proj [heads·(d_n+d_v), d_c]; q [rows, heads, d_n+d_r], q_lat [rows, heads, d_c].
     */
    public void absorbQuery(KernelGraph g, String task, float[] q, float[] qLat, int rows, int heads, int dn, int dr, int dv) {
        int dc = checkKvB(heads, dn, dv);
        requireLength(task + " q", q, (long) rows * heads * (dn + dr));
        requireLength(task + " q_lat", qLat, (long) rows * heads * dc);
        String b = bufferName();
        switch (dtype) {
            case F32 -> g.task(task, Absorb::absorbQuery, q, g.weight(b, f32), qLat, rows, heads, dn, dr, dv, dc);
            case BF16 -> g.task(task, Absorb::absorbQueryBf16, q, g.weight(b, bf16), pow2(g), qLat, rows, heads, dn, dr, dv, dc);
            case FP8 -> g.task(task, Absorb::absorbQueryFp8, q, g.weight(b, codes), g.weight(b + ".scale_inv", scales), pow2(g),
                    qLat, rows, heads, dn, dr, dv, dc);
        }
    }

    /**
     * Adds task {@code task}: o = W^UV·o_lat per head ({@link Absorb#unabsorbValue}) with this weight as
     * kv_b_proj; o_lat [rows, heads, d_c], o [rows, heads, d_v].
     */
    public void unabsorbValue(KernelGraph g, String task, float[] oLat, float[] o, int rows, int heads, int dn, int dv) {
        int dc = checkKvB(heads, dn, dv);
        requireLength(task + " o_lat", oLat, (long) rows * heads * dc);
        requireLength(task + " o", o, (long) rows * heads * dv);
        String b = bufferName();
        switch (dtype) {
            case F32 -> g.task(task, Absorb::unabsorbValue, oLat, g.weight(b, f32), o, rows, heads, dn, dv, dc);
            case BF16 -> g.task(task, Absorb::unabsorbValueBf16, oLat, g.weight(b, bf16), pow2(g), o, rows, heads, dn, dv, dc);
            case FP8 -> g.task(task, Absorb::unabsorbValueFp8, oLat, g.weight(b, codes), g.weight(b + ".scale_inv", scales), pow2(g),
                    o, rows, heads, dn, dv, dc);
        }
    }

    /** Graph g's power-of-two table (a WEIGHT buffer "pow2"), made on its first use there. */
    private static float[] pow2(KernelGraph g) {
        return g.weight("pow2", TABLES.computeIfAbsent(g, k -> Bf16.pow2()));
    }

    private int checkKvB(int heads, int dn, int dv) {
        if ((long) heads * (dn + dv) != rows()) {
            throw new MlaException("weight " + Messages.quote(name) + " " + Messages.shape(shape) + " is not kv_b_proj for "
                    + heads + " heads of d_n " + dn + " + d_v " + dv);
        }
        return cols();
    }

    /**
     * This weight as an f32 buffer of {@code g}: for an F32 weight a copy of its values (a WEIGHT buffer: what
     * is returned is never the weight's own storage), for BF16 and FP8 a SCRATCH buffer that task {@code task}
     * fills with the decoded values on every execution ({@link Dequantize}). The NAIVE attention path uses it
     * for kv_b_proj, norms use it as they are f32.
     */
    public float[] asF32(KernelGraph g, String task) {
        Objects.requireNonNull(g, "g");
        Objects.requireNonNull(task, "task");
        String b = bufferName();
        if (dtype == WeightDtype.F32) {
            Memory.require(4L * f32.length, "a copy of weight " + name);
            return g.weight(b, f32.clone());
        }
        int rows = shape.length == 2 ? (int) shape[0] : 1, cols = (int) shape[shape.length - 1];
        float[] out = g.scratch(b + ".f32", new float[numbers()]);
        if (dtype == WeightDtype.BF16) {
            g.task(task, Dequantize::fromBf16, g.weight(b, bf16), pow2(g), out, rows, cols);
        } else {
            g.task(task, Dequantize::fromFp8, g.weight(b, codes), g.weight(b + ".scale_inv", scales), pow2(g), out, rows, cols);
        }
        return out;
    }
}
