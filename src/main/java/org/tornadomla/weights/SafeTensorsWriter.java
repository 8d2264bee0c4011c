package org.tornadomla.weights;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import org.tornadomla.MlaException;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a safetensors file from f32 data, stored as F32, BF16 (round to nearest even) or F16. The file
 * is written next to the target under a temporary name and moved into place only when complete, so a
 * failed write never leaves a half-written file at the target path.
 */
public final class SafeTensorsWriter {
    private record Entry(String name, DType dtype, long[] shape, float[] data, byte[] raw) {
    }

    private final List<Entry> entries = new ArrayList<>();
    private final Map<String, String> metadata = new LinkedHashMap<>();

    public SafeTensorsWriter add(String name, long[] shape, float[] data) {
        return add(name, DType.F32, shape, data);
    }

    public SafeTensorsWriter add(String name, DType dtype, long[] shape, float[] data) {
        if (dtype != DType.F32 && dtype != DType.BF16 && dtype != DType.F16)
            throw new MlaException("tensor '" + name + "': can write F32, BF16 or F16, not " + dtype);
        long n = 1;
        for (long d : shape) n *= d;
        if (n != data.length)
            throw new MlaException("tensor '" + name + "': shape " + MlaException.shape(shape) + " holds " + n + " numbers, data has " + data.length);
        for (Entry e : entries) {
            if (e.name.equals(name)) throw new MlaException("tensor '" + name + "' added twice");
        }
        entries.add(new Entry(name, dtype, shape.clone(), data, null));
        return this;
    }

    /** A tensor of raw bytes: I8, U8 or F8_E4M3 values as they are. */
    public SafeTensorsWriter addBytes(String name, DType dtype, long[] shape, byte[] data) {
        if (dtype.bytes != 1 || dtype.isFloat()) throw new MlaException("tensor '" + name + "': raw bytes are I8, U8 or F8_E4M3, not " + dtype);
        long n = 1;
        for (long d : shape) n *= d;
        if (n != data.length)
            throw new MlaException("tensor '" + name + "': shape " + MlaException.shape(shape) + " holds " + n + " numbers, data has " + data.length);
        for (Entry e : entries) {
            if (e.name.equals(name)) throw new MlaException("tensor '" + name + "' added twice");
        }
        entries.add(new Entry(name, dtype, shape.clone(), null, data));
        return this;
    }

    public SafeTensorsWriter metadata(String key, String value) {
        metadata.put(key, value);
        return this;
    }

    public void write(Path target) {
        JsonObject header = new JsonObject();
        if (!metadata.isEmpty()) {
            JsonObject m = new JsonObject();
            metadata.forEach(m::addProperty);
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
        Path abs = target.toAbsolutePath();
        Path tmp = null;
        try {
            Files.createDirectories(abs.getParent());
            tmp = Files.createTempFile(abs.getParent(), "." + abs.getFileName(), ".tmp");
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 20)) {
                ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(padded);
                out.write(len.array());
                out.write(json);
                for (int i = json.length; i < padded; i++) out.write(' ');
                for (Entry e : entries) writeData(out, e);
            }
            Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            tmp = null;
        } catch (IOException e) {
            throw new MlaException("cannot write " + target + ": " + e.getMessage(), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort: the target itself was never touched
                }
            }
        }
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
