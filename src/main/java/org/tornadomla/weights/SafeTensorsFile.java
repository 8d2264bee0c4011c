package org.tornadomla.weights;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import org.tornadomla.MlaException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One safetensors file, memory-mapped (no copy of the file into the heap; files over 2 GB work).
 * Layout: an 8-byte little-endian header length n, n bytes of JSON header, then the data section.
 * Every offset is validated against the file size when the file is opened, so a corrupt file
 * (truncated data, header length past the end, ranges out of bounds or overlapping) is rejected with a
 * message before anything is read from it, and nothing is ever read past the end of the file.
 */
public final class SafeTensorsFile implements TensorSource {
    /** The format's own limit on the header size. */
    static final long MAX_HEADER = 100L * 1024 * 1024;

    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64_LE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final Arena arena;
    private final MemorySegment data;
    private final Map<String, TensorInfo> tensors;
    private final Map<String, String> metadata;

    private SafeTensorsFile(Path path, Arena arena, MemorySegment data, Map<String, TensorInfo> tensors,
                            Map<String, String> metadata) {
        this.path = path;
        this.arena = arena;
        this.data = data;
        this.tensors = tensors;
        this.metadata = metadata;
    }

    public static SafeTensorsFile open(Path path) {
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < 8) throw new MlaException(path + ": not a safetensors file: " + size + " bytes, expected at least 8 (the header length)");
            MemorySegment file = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            long n = file.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
            if (n < 2 || n > size - 8) {
                throw new MlaException(path + ": corrupt safetensors file: header length " + Long.toUnsignedString(n)
                        + " runs past the end of the file (file size " + size + " bytes, at most " + (size - 8) + " available)");
            }
            if (n > MAX_HEADER) throw new MlaException(path + ": corrupt safetensors file: header length " + n + " exceeds the format's 100 MB limit");
            String json = new String(file.asSlice(8, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
            MemorySegment data = file.asSlice(8 + n);
            Map<String, String> metadata = new LinkedHashMap<>();
            Map<String, TensorInfo> tensors = parseHeader(json, data.byteSize(), metadata);
            return new SafeTensorsFile(path, arena, data, tensors, metadata);
        } catch (NoSuchFileException e) {
            arena.close();
            throw new MlaException("file not found: " + path);
        } catch (IOException e) {
            arena.close();
            throw new MlaException("cannot read " + path + ": " + e.getMessage(), e);
        } catch (MlaException e) {
            arena.close();
            throw e.getMessage().startsWith(path.toString()) ? e : new MlaException(path + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    static Map<String, TensorInfo> parseHeader(String json, long dataSize, Map<String, String> metadata) {
        JsonObject header;
        try {
            JsonElement e = JsonParser.parseString(json);
            if (!e.isJsonObject()) throw new MlaException("corrupt safetensors header: expected a JSON object");
            header = e.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new MlaException("corrupt safetensors header: not valid JSON (" + e.getMessage() + ")", e);
        }
        Map<String, TensorInfo> tensors = new LinkedHashMap<>();
        for (Map.Entry<String, JsonElement> entry : header.entrySet()) {
            String name = entry.getKey();
            if (name.equals("__metadata__")) {
                if (entry.getValue().isJsonObject()) {
                    for (Map.Entry<String, JsonElement> m : entry.getValue().getAsJsonObject().entrySet()) {
                        metadata.put(m.getKey(), m.getValue().isJsonPrimitive() ? m.getValue().getAsString() : m.getValue().toString());
                    }
                }
                continue;
            }
            tensors.put(name, parseTensor(name, entry.getValue(), dataSize));
        }
        List<TensorInfo> byOffset = new ArrayList<>(tensors.values());
        byOffset.sort(Comparator.comparingLong(TensorInfo::begin).thenComparingLong(TensorInfo::end));
        for (int i = 1; i < byOffset.size(); i++) {
            TensorInfo a = byOffset.get(i - 1);
            TensorInfo b = byOffset.get(i);
            if (b.begin() < a.end()) {
                throw new MlaException("corrupt safetensors header: tensors '" + a.name() + "' [" + a.begin() + ", " + a.end()
                        + ") and '" + b.name() + "' [" + b.begin() + ", " + b.end() + ") overlap");
            }
        }
        return tensors;
    }

    private static TensorInfo parseTensor(String name, JsonElement e, long dataSize) {
        String where = "corrupt safetensors header: tensor '" + name + "': ";
        if (!e.isJsonObject()) throw new MlaException(where + "expected an object with dtype, shape, data_offsets");
        JsonObject o = e.getAsJsonObject();
        if (!o.has("dtype") || !o.get("dtype").isJsonPrimitive()) throw new MlaException(where + "missing dtype");
        DType dtype = DType.parse(o.get("dtype").getAsString(), name);
        long[] shape = longs(o.get("shape"), where + "shape");
        long[] off = longs(o.get("data_offsets"), where + "data_offsets");
        if (off.length != 2) throw new MlaException(where + "data_offsets must be [begin, end], found " + o.get("data_offsets"));
        long numel = 1;
        try {
            for (long d : shape) numel = Math.multiplyExact(numel, d);
            numel = Math.multiplyExact(numel, dtype.bytes);
        } catch (ArithmeticException x) {
            throw new MlaException(where + "shape " + MlaException.shape(shape) + " is too large");
        }
        if (off[0] > off[1] || off[1] > dataSize) {
            throw new MlaException(where + "data_offsets [" + off[0] + ", " + off[1] + "] out of range: the data section holds "
                    + dataSize + " bytes (truncated file?)");
        }
        if (off[1] - off[0] != numel) {
            throw new MlaException(where + "data_offsets [" + off[0] + ", " + off[1] + "] hold " + (off[1] - off[0])
                    + " bytes, expected " + numel + " for " + dtype + " " + MlaException.shape(shape));
        }
        return new TensorInfo(name, dtype, shape, off[0], off[1]);
    }

    private static long[] longs(JsonElement e, String what) {
        if (e == null || !e.isJsonArray()) throw new MlaException(what + " must be an array of non-negative integers");
        JsonArray a = e.getAsJsonArray();
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            JsonElement x = a.get(i);
            if (!x.isJsonPrimitive() || !x.getAsJsonPrimitive().isNumber())
                throw new MlaException(what + " must be an array of non-negative integers, found " + e);
            double d = x.getAsDouble();
            if (d < 0 || d != Math.rint(d) || d > 9.0e15) throw new MlaException(what + " must be an array of non-negative integers, found " + e);
            out[i] = x.getAsLong();
        }
        return out;
    }

    public Path path() {
        return path;
    }

    public Map<String, String> metadata() {
        return Collections.unmodifiableMap(metadata);
    }

    @Override
    public Set<String> names() {
        return Collections.unmodifiableSet(tensors.keySet());
    }

    @Override
    public TensorInfo info(String name) {
        return tensors.get(name);
    }

    @Override
    public float[] readFloats(String name) {
        TensorInfo t = tensors.get(name);
        if (t == null) throw new MlaException(path + ": no tensor '" + name + "'");
        long n = t.numel();
        if (n > Integer.MAX_VALUE - 8) throw new MlaException("tensor '" + name + "' " + t.shapeString() + " is too large for one Java array");
        float[] out = new float[(int) n];
        MemorySegment s = data.asSlice(t.begin(), t.end() - t.begin());
        switch (t.dtype()) {
            case F32 -> MemorySegment.copy(s, F32_LE, 0, out, 0, out.length);
            case BF16 -> {
                for (int i = 0; i < out.length; i++) out[i] = Bf16Bits.decode(s.getAtIndex(I16_LE, i));
            }
            case F16 -> {
                for (int i = 0; i < out.length; i++) out[i] = Float.float16ToFloat(s.getAtIndex(I16_LE, i));
            }
            case F64 -> {
                for (int i = 0; i < out.length; i++) out[i] = (float) s.getAtIndex(F64_LE, i);
            }
            default -> throw new MlaException("tensor '" + name + "': dtype " + t.dtype()
                    + " cannot be read as floats (expected F32, BF16, F16 or F64)");
        }
        return out;
    }

    /** A one-byte tensor's bytes as they are (I8, U8, F8_E4M3). */
    public byte[] readBytes(String name) {
        TensorInfo t = tensors.get(name);
        if (t == null) throw new MlaException(path + ": no tensor '" + name + "'");
        if (t.dtype().bytes != 1 || t.dtype() == DType.BOOL) {
            throw new MlaException("tensor '" + name + "': expected a one-byte dtype (I8, U8, F8_E4M3), found " + t.dtype());
        }
        return data.asSlice(t.begin(), t.end() - t.begin()).toArray(ValueLayout.JAVA_BYTE);
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) arena.close();
    }
}
