package org.tornadomla.weights;

import org.tornadomla.internal.Messages;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import org.tornadomla.MlaException;
import org.tornadomla.io.Json;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * One safetensors file, memory-mapped (no copy of the file into the heap; files over 2 GB work).
 * Layout: an 8-byte little-endian header length n, n bytes of JSON header (padded with spaces), then the
 * data section. The file is read strictly, when it is opened and before anything is read from it:
 * <ul>
 *   <li>the header is valid UTF-8 and strict JSON (no duplicate keys, no comments, nothing but spaces after
 *       the object), an object of tensors {"dtype", "shape", "data_offsets"} and an optional
 *       {@code __metadata__} object of strings;</li>
 *   <li>each tensor's byte range [begin, end) holds exactly its dtype's size times its element count, and the
 *       ranges, sorted, tile the data section exactly: the first starts at 0, each starts where the one before
 *       ends, the last ends at the end of the file (no gap, overlap or trailing bytes);</li>
 *   <li>a dtype is read only as itself: {@link #readFloats} takes the float dtypes, {@link #readBytes} one
 *       named one-byte dtype.</li>
 * </ul>
 * Every refusal is an {@link MlaException} naming the file and the tensor, names printed escaped.
 */
public final class SafeTensorsFile implements TensorSource {
    /** The format's own limit on the header size. */
    static final long MAX_HEADER = 100L * 1024 * 1024;

    private static final ValueLayout.OfFloat F32_LE = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64_LE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort I16_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final Arena arena;
    private final FileChannel channel;      // kept open: its size is the mapped file's, however the path changes
    private final long dataStart;           // 8 + header length
    private final MemorySegment data;
    private final Map<String, TensorInfo> tensors;
    private final Map<String, String> metadata;

    private SafeTensorsFile(Path path, Arena arena, FileChannel channel, long dataStart, MemorySegment data,
                            Map<String, TensorInfo> tensors, Map<String, String> metadata) {
        this.path = path;
        this.arena = arena;
        this.channel = channel;
        this.dataStart = dataStart;
        this.data = data;
        this.tensors = tensors;
        this.metadata = metadata;
    }

    /** "; it begins with the text 'abc…'" when the file's first bytes are printable ASCII (a text file), else "". */
    private static String begins(MemorySegment file, long size) {
        int n = (int) Math.min(size, 24);
        StringBuilder t = new StringBuilder();
        for (int i = 0; i < n; i++) {
            byte b = file.get(ValueLayout.JAVA_BYTE, i);
            if (b == '\n' || b == '\r' || b == '\t') b = ' ';
            if (b < 0x20 || b > 0x7E) return "";
            t.append((char) b);
        }
        return "; it begins with the text " + Messages.quote(t + (size > n ? "..." : ""));
    }

    /** Opens and checks a safetensors file (header, offsets, sizes); refused, naming the file and what is wrong, when it is not one. */
    public static SafeTensorsFile open(Path path) {
        return open(path, "a config.json?");
    }

    /**
     * As {@link #open(Path)}; {@code jsonHint} ends the refusal of a JSON file, which is most often another file of a
     * checkpoint given in place of this one: what the caller expected there (the weights, a command's input).
     */
    public static SafeTensorsFile open(Path path, String jsonHint) {
        Objects.requireNonNull(path, "path");
        if (!Files.exists(path)) throw new MlaException("file not found: " + path);
        if (!Files.isRegularFile(path)) throw new MlaException(path + ": not a safetensors file: not a regular file");
        Arena arena = Arena.ofShared();
        FileChannel ch = null;
        try {
            ch = FileChannel.open(path, StandardOpenOption.READ);
            long size = ch.size();
            if (size < 8) throw new MlaException(path + ": not a safetensors file: " + size + " bytes, expected at least 8 (the header length)");
            MemorySegment file = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            long n = file.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 0);
            if (n < 2 || n > size - 8) {
                byte first = file.get(ValueLayout.JAVA_BYTE, 0);
                if (first == '{' || first == '[') {
                    throw new MlaException(path + ": this is JSON (it starts with '" + (char) first + "'), not a safetensors file (" + jsonHint + ")");
                }
                // a header that starts like one ('{' after the length): a cut or damaged safetensors file; else another kind of file
                boolean cut = size > 8 && file.get(ValueLayout.JAVA_BYTE, 8) == '{';
                throw new MlaException(path + (cut ? ": corrupt safetensors file" : ": not a safetensors file") + ": header length "
                        + Long.toUnsignedString(n) + " does not fit the file (file size " + size + " bytes, at most " + (size - 8)
                        + " after the length)" + (cut ? "" : begins(file, size)));
            }
            if (n > MAX_HEADER) throw new MlaException(path + ": corrupt safetensors file: header length " + n + " exceeds the format's 100 MB limit");
            byte[] header = file.asSlice(8, n).toArray(ValueLayout.JAVA_BYTE);
            MemorySegment data = file.asSlice(8 + n);
            Map<String, String> metadata = new LinkedHashMap<>();
            Map<String, TensorInfo> tensors = parseHeader(header, data.byteSize(), metadata);
            return new SafeTensorsFile(path, arena, ch, 8 + n, data, tensors, metadata);
        } catch (IOException e) {
            release(arena, ch);
            throw new MlaException("cannot read " + path + ": " + Messages.reason(e), e);
        } catch (MlaException e) {
            release(arena, ch);
            throw e.getMessage().startsWith(path.toString()) ? e : new MlaException(path + ": " + e.getMessage(), e);
        } catch (InternalError e) {
            release(arena, ch);
            throw new MlaException(path + ": the file changed while it was read (truncated by another writer?)", e);
        } catch (RuntimeException | Error e) {
            release(arena, ch);
            throw e;
        }
    }

    private static void release(Arena arena, FileChannel ch) {
        if (arena.scope().isAlive()) arena.close();
        try {
            if (ch != null) ch.close();
        } catch (IOException ignored) {
            // nothing was written: closing a read-only channel cannot lose data
        }
    }

    /**
     * The tensors of a header (the n bytes after the length) over a data section of dataSize bytes; fills
     * metadata. Throws unless the header is strict and the tensors tile the data section (class comment).
     */
    static Map<String, TensorInfo> parseHeader(byte[] header, long dataSize, Map<String, String> metadata) {
        // the JSON object, then only the spaces the format allows as padding
        int end = header.length;
        while (end > 0 && header[end - 1] == ' ') end--;
        if (end == 0 || header[0] != '{' || header[end - 1] != '}') {
            throw new MlaException("corrupt safetensors header: expected a JSON object padded with spaces, found "
                    + (end == 0 ? "only spaces" : "bytes 0x" + HexFormat.of().toHexDigits(header[0]) + " … 0x"
                    + HexFormat.of().toHexDigits(header[end - 1])));
        }
        String json = Json.decodeUtf8(java.util.Arrays.copyOf(header, end), "corrupt safetensors header: the header");
        JsonObject root;
        try {
            root = Json.parse(json).getAsJsonObject();
        } catch (MlaException e) {
            throw new MlaException("corrupt safetensors header: " + e.getMessage(), e);
        }
        Map<String, TensorInfo> tensors = new LinkedHashMap<>();
        for (Map.Entry<String, JsonElement> entry : root.entrySet()) {
            String name = entry.getKey();
            if (name.equals("__metadata__")) {
                JsonElement m = entry.getValue();
                if (!m.isJsonObject()) throw new MlaException("corrupt safetensors header: __metadata__ must be an object of strings, found " + Json.describe(m));
                for (Map.Entry<String, JsonElement> kv : m.getAsJsonObject().entrySet()) {
                    metadata.put(kv.getKey(), Json.string(kv.getValue(), "corrupt safetensors header: __metadata__ value " + Messages.quote(kv.getKey())));
                }
                continue;
            }
            tensors.put(name, parseTensor(name, entry.getValue(), dataSize));
        }
        // sorted by range, the tensors must cover [0, dataSize) exactly once
        List<TensorInfo> byOffset = new ArrayList<>(tensors.values());
        byOffset.sort(Comparator.comparingLong(TensorInfo::begin).thenComparingLong(TensorInfo::end));
        long expected = 0;
        TensorInfo previous = null;
        for (TensorInfo t : byOffset) {
            if (t.begin() != expected) {
                String where = previous == null ? "the data section starts at 0" : "tensor " + Messages.quote(previous.name()) + " ends at " + expected;
                throw new MlaException("corrupt safetensors header: tensor " + Messages.quote(t.name()) + " starts at byte " + t.begin() + " but "
                        + where + (t.begin() < expected ? " (overlap)" : " (a gap)"));
            }
            expected = t.end();
            previous = t;
        }
        if (expected != dataSize) {
            throw new MlaException("corrupt safetensors header: the tensors cover " + expected + " bytes, the data section holds " + dataSize
                    + (expected < dataSize ? " (trailing bytes: wrong header length, or a truncated header?)" : ""));
        }
        return tensors;
    }

    private static TensorInfo parseTensor(String name, JsonElement e, long dataSize) {
        String where = "corrupt safetensors header: tensor " + Messages.quote(name) + ": ";
        if (!e.isJsonObject()) throw new MlaException(where + "expected an object with dtype, shape, data_offsets, found " + Json.describe(e));
        JsonObject o = e.getAsJsonObject();
        if (name.startsWith("__") && !o.has("data_offsets")) {
            // a reserved-looking key that is not __metadata__ and no tensor (no data_offsets): most likely that key
            // damaged, so say so rather than judging its fields as a tensor's (a tensor may be named "__x")
            throw new MlaException("corrupt safetensors header: unknown key " + Messages.quote(name) + " (the only key that is not a tensor is "
                    + "__metadata__)");
        }
        String dtypeName = Json.string(o.get("dtype"), where + "dtype");
        DType dtype;
        try {
            dtype = DType.parse(dtypeName, name);
        } catch (MlaException bad) {
            throw new MlaException("corrupt safetensors header: " + bad.getMessage());
        }
        long[] shape = longs(o.get("shape"), where + "shape");
        long[] off = longs(o.get("data_offsets"), where + "data_offsets");
        if (off.length != 2) throw new MlaException(where + "data_offsets must be [begin, end], found " + off.length + " numbers");
        long bytes = dtype.bytes;
        for (long d : shape) {
            bytes = d == 0 || bytes == 0 ? 0 : bytes > Long.MAX_VALUE / d ? -1 : bytes * d;
            if (bytes < 0) throw new MlaException(where + "shape " + Messages.shape(shape) + " is too large");
        }
        if (off[0] > off[1] || off[1] > dataSize) {
            throw new MlaException(where + "data_offsets [" + off[0] + ", " + off[1] + "] out of range: the data section holds "
                    + dataSize + " bytes (truncated file?)");
        }
        if (off[1] - off[0] != bytes) {
            throw new MlaException(where + "data_offsets [" + off[0] + ", " + off[1] + "] hold " + (off[1] - off[0])
                    + " bytes, expected " + bytes + " for " + dtype + " " + Messages.shape(shape));
        }
        return new TensorInfo(name, dtype, shape, off[0], off[1]);
    }

    private static long[] longs(JsonElement e, String what) {
        if (e == null || !e.isJsonArray()) throw new MlaException(what + " must be an array of non-negative integers, found " + Json.describe(e));
        JsonArray a = e.getAsJsonArray();
        if (a.size() > 64) throw new MlaException(what + " has " + a.size() + " entries; at most 64 are read");
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) out[i] = Json.nonNegativeLong(a.get(i), what + "[" + i + "]");
        return out;
    }

    /** The file's path. */
    public Path path() {
        return path;
    }

    /** The header's {@code __metadata__} strings (empty when it has none). */
    public Map<String, String> metadata() {
        return Collections.unmodifiableMap(metadata);
    }

    @Override
    public Set<String> names() {
        return Collections.unmodifiableSet(tensors.keySet());
    }

    @Override
    public TensorInfo info(String name) {
        return tensors.get(Objects.requireNonNull(name, "name"));
    }

    @Override
    public float[] readFloats(String name) {
        TensorInfo t = tensor(name);
        long n = t.numel();
        if (n > Integer.MAX_VALUE - 8) throw new MlaException("tensor " + Messages.quote(name) + " " + t.shapeString() + " is too large for one Java array");
        if (!t.dtype().isFloat()) {
            throw new MlaException("tensor " + Messages.quote(name) + ": dtype " + t.dtype()
                    + " cannot be read as floats (expected F32, BF16, F16 or F64)");
        }
        float[] out = new float[(int) n];
        mapped(name, () -> {
            MemorySegment s = data.asSlice(t.begin(), t.end() - t.begin());
            switch (t.dtype()) {
                case F32 -> MemorySegment.copy(s, F32_LE, 0, out, 0, out.length);
                case BF16 -> {
                    for (int i = 0; i < out.length; i++) out[i] = Bf16Bits.decode(s.getAtIndex(I16_LE, i));
                }
                case F16 -> {
                    for (int i = 0; i < out.length; i++) out[i] = Float.float16ToFloat(s.getAtIndex(I16_LE, i));
                }
                default -> {
                    for (int i = 0; i < out.length; i++) out[i] = (float) s.getAtIndex(F64_LE, i);
                }
            }
            return null;
        });
        return out;
    }

    /**
     * Runs a read of the mapping. A file cut shorter by another writer after it was mapped makes the pages past
     * its new end fault (the JVM reports an {@link InternalError}), and a file closed by another thread ends the
     * mapping (an {@link IllegalStateException}): both become an {@link MlaException} naming the file.
     */
    private <T> T mapped(String name, java.util.function.Supplier<T> read) {
        requireOpen();
        TensorInfo t = tensors.get(name);
        long size;
        try {
            size = channel.size();
        } catch (IOException e) {
            throw new MlaException("cannot read " + path + ": " + Messages.reason(e), e);
        }
        if (size < dataStart + t.end()) {
            throw new MlaException(path + ": the file changed while it was open: it holds " + size + " bytes, tensor "
                    + Messages.quote(name) + " ends at byte " + (dataStart + t.end()) + " (truncated by another writer?); open it again");
        }
        try {
            return read.get();
        } catch (InternalError e) {            // cut between the size check and the read
            throw new MlaException(path + ": the file changed while it was open (truncated by another writer?) reading tensor "
                    + Messages.quote(name) + "; open it again", e);
        } catch (IllegalStateException e) {
            if (arena.scope().isAlive()) throw e;
            throw new MlaException(path + ": read of tensor " + Messages.quote(name) + " after the file was closed", e);
        }
    }

    private void requireOpen() {
        if (!arena.scope().isAlive()) throw new MlaException(path + ": read after the file was closed");
    }

    /**
     * A one-byte tensor's bytes as they are. The tensor's dtype must be {@code expected} (I8, U8, F8_E4M3 or
     * F8_E5M2): bytes of another format are never read as these.
     */
    @Override
    public byte[] readBytes(String name, DType expected) {
        Objects.requireNonNull(expected, "expected");
        TensorInfo t = tensor(name);
        if (t.dtype() != expected) {
            throw new MlaException("tensor " + Messages.quote(name) + ": expected dtype " + expected + ", found " + t.dtype());
        }
        if (expected.bytes != 1 || expected == DType.BOOL) throw new MlaException("readBytes reads one-byte numbers, not " + expected);
        if (t.end() - t.begin() > Integer.MAX_VALUE - 8) throw new MlaException("tensor " + Messages.quote(name) + " is too large for one Java array");
        return mapped(name, () -> data.asSlice(t.begin(), t.end() - t.begin()).toArray(ValueLayout.JAVA_BYTE));
    }

    /** CRC32C of the tensor's bytes in the file (what {@link SafeTensorsWriter#checksums()} records). */
    public long crc32c(String name) {
        TensorInfo t = tensor(name);
        return mapped(name, () -> {
            // through a heap copy: the CRC32C intrinsic reading the mapping directly would crash the JVM on a page
            // that a truncation removed, where a segment copy raises an error that mapped() reports
            CRC32C crc = new CRC32C();
            byte[] chunk = new byte[(int) Math.min(1 << 20, t.end() - t.begin())];
            for (long at = t.begin(); at < t.end(); at += chunk.length) {
                int n = (int) Math.min(chunk.length, t.end() - at);
                MemorySegment.copy(data, ValueLayout.JAVA_BYTE, at, chunk, 0, n);
                crc.update(chunk, 0, n);
            }
            return crc.getValue();
        });
    }

    private TensorInfo tensor(String name) {
        Objects.requireNonNull(name, "name");
        requireOpen();
        TensorInfo t = tensors.get(name);
        if (t == null) throw new MlaException(path + ": no tensor " + Messages.quote(name));
        return t;
    }

    @Override
    public List<Path> files() {
        return List.of(path);
    }

    /** Ends the mapping; a read after it is an {@link MlaException} naming the file. Closing twice is harmless. */
    @Override
    public synchronized void close() {
        release(arena, channel);
    }
}
