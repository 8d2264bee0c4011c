package org.tornadomla.weights;

import org.tornadomla.internal.Messages;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import org.tornadomla.MlaException;
import org.tornadomla.io.OutputFiles;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Writes a safetensors file from f32 data, stored as F32, BF16 (round to nearest even) or F16, or raw bytes.
 * The file is written through {@link OutputFiles}: completely or not at all, never over a non-regular file
 * or over one of the given inputs. With {@link #checksums()} the metadata carries a CRC32C of each tensor's
 * bytes ({@code crc32c.<name>}, 8 hex digits), which {@link SafeTensorsFile#crc32c} recomputes on reading.
 */
public final class SafeTensorsWriter {
    /** Metadata key prefix of the per-tensor checksums. */
    public static final String CRC_PREFIX = "crc32c.";

    private record Entry(String name, DType dtype, long[] shape, float[] data, byte[] raw) {
    }

    private final List<Entry> entries = new ArrayList<>();
    private final Map<String, String> metadata = new LinkedHashMap<>();
    private boolean checksums;

    /** A file with no tensors and no metadata yet. */
    public SafeTensorsWriter() {
    }

    /** Adds an F32 tensor. */
    public SafeTensorsWriter add(String name, long[] shape, float[] data) {
        return add(name, DType.F32, shape, data);
    }

    /** Adds a tensor stored as {@code dtype}: F32, BF16 or F16 (rounded to nearest even). */
    public SafeTensorsWriter add(String name, DType dtype, long[] shape, float[] data) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(data, "data");
        if (dtype != DType.F32 && dtype != DType.BF16 && dtype != DType.F16)
            throw new MlaException("tensor " + Messages.quote(name) + ": can write F32, BF16 or F16, not " + dtype);
        check(name, shape, data.length);
        entries.add(new Entry(name, dtype, shape.clone(), data, null));
        return this;
    }

    /** A tensor of raw bytes: I8, U8 or F8_E4M3 values as they are. */
    public SafeTensorsWriter addBytes(String name, DType dtype, long[] shape, byte[] data) {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(data, "data");
        if (dtype.bytes != 1 || dtype.isFloat() || dtype == DType.BOOL)
            throw new MlaException("tensor " + Messages.quote(name) + ": raw bytes are I8, U8, F8_E4M3 or F8_E5M2, not " + dtype);
        check(name, shape, data.length);
        entries.add(new Entry(name, dtype, shape.clone(), null, data));
        return this;
    }

    private void check(String name, long[] shape, int length) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(shape, "shape");
        if (name.equals("__metadata__")) throw new MlaException("tensor name '__metadata__' is reserved by the format");
        long n = 1;
        for (long d : shape) {
            if (d < 0) throw new MlaException("tensor " + Messages.quote(name) + ": shape " + Messages.shape(shape) + " has a negative dimension");
            n = d == 0 || n == 0 ? 0 : n > Long.MAX_VALUE / d ? -1 : n * d;
            if (n < 0) throw new MlaException("tensor " + Messages.quote(name) + ": shape " + Messages.shape(shape) + " is too large");
        }
        if (n != length)
            throw new MlaException("tensor " + Messages.quote(name) + ": shape " + Messages.shape(shape) + " holds " + n + " numbers, data has " + length);
        for (Entry e : entries) {
            if (e.name.equals(name)) throw new MlaException("tensor " + Messages.quote(name) + " added twice");
        }
    }

    /** Adds a {@code __metadata__} string. */
    public SafeTensorsWriter metadata(String key, String value) {
        metadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return this;
    }

    /** Adds a CRC32C of every tensor's bytes to the metadata when the file is written. */
    public SafeTensorsWriter checksums() {
        checksums = true;
        return this;
    }

    /** Writes the file; {@code target} must be a new or regular, writable file. */
    public void write(Path target) {
        write(target, List.of());
    }

    /** Writes the file, refusing a target that is one of {@code inputs} (see {@link OutputFiles}). */
    public void write(Path target, Collection<Path> inputs) {
        OutputFiles.check(target, inputs);
        OutputFiles.write(target, inputs, this::writeTo);
    }

    /** Writes the file only as a new one: refused where {@code target} exists or appears meanwhile ({@link OutputFiles#writeNew}). */
    public void writeNew(Path target) {
        OutputFiles.check(target, List.of());
        OutputFiles.writeNew(target, this::writeTo);
    }

    private void writeTo(java.io.OutputStream out) throws java.io.IOException {
        JsonObject header = new JsonObject();
        Map<String, String> meta = new LinkedHashMap<>(metadata);
        if (checksums) {
            for (Entry e : entries) meta.put(CRC_PREFIX + e.name, String.format("%08x", crc32c(e)));
        }
        if (!meta.isEmpty()) {
            JsonObject m = new JsonObject();
            meta.forEach(m::addProperty);
            header.add("__metadata__", m);
        }
        long offset = 0;
        for (Entry e : entries) {
            JsonObject t = new JsonObject();
            t.addProperty("dtype", e.dtype.name());
            JsonArray shape = new JsonArray();
            for (long d : e.shape) shape.add(d);
            t.add("shape", shape);
            long bytes = (long) (e.raw != null ? e.raw.length : e.data.length) * e.dtype.bytes;
            JsonArray off = new JsonArray();
            off.add(offset);
            off.add(offset + bytes);
            t.add("data_offsets", off);
            header.add(e.name, t);
            offset += bytes;
        }
        byte[] json = header.toString().getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) / 8 * 8;               // data starts 8-byte aligned
        ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(padded);
        out.write(len.array());
        out.write(json);
        for (int i = json.length; i < padded; i++) out.write(' ');
        for (Entry e : entries) writeData(out, e);
    }

    /** CRC32C of the bytes {@link #writeData} writes for e. */
    private static long crc32c(Entry e) {
        CRC32C crc = new CRC32C();
        try {
            writeData(new OutputStream() {
                @Override
                public void write(int b) {
                    crc.update(b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    crc.update(b, off, len);
                }
            }, e);
        } catch (IOException x) {
            throw new IllegalStateException(x);               // the stream above never throws
        }
        return crc.getValue();
    }

    private static void writeData(OutputStream out, Entry e) throws IOException {
        if (e.raw != null) {
            out.write(e.raw);
            return;
        }
        ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : e.data) {
            if (buf.remaining() < 4) {
                out.write(buf.array(), 0, buf.position());
                buf.clear();
            }
            switch (e.dtype) {
                case F32 -> buf.putFloat(v);
                case BF16 -> buf.putShort(Bf16Bits.encode(v));
                case F16 -> buf.putShort(Float.floatToFloat16(v));
                default -> throw new IllegalStateException();
            }
        }
        out.write(buf.array(), 0, buf.position());
    }
}
