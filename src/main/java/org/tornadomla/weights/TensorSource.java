package org.tornadomla.weights;

import org.tornadomla.MlaException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** Named tensors read from safetensors: one file, or a sharded checkpoint with an index. */
public interface TensorSource extends AutoCloseable {

    Set<String> names();

    /** The tensor's description, or null when there is no such tensor. */
    TensorInfo info(String name);

    /** The tensor as f32 (F32, BF16, F16 and F64 convert; other dtypes are an error naming the tensor and its dtype). */
    float[] readFloats(String name);

    /** The tensor, which must exist and have exactly this shape, as f32. */
    default float[] readFloats(String name, long... shape) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(shape, "shape");
        TensorInfo info = info(name);
        if (info == null) throw new MlaException("missing tensor " + MlaException.quote(name) + " (expected shape " + MlaException.shape(shape) + ")");
        info.requireShape(shape);
        return readFloats(name);
    }

    /**
     * A one-byte tensor's bytes as they are; its dtype must be {@code expected} (I8, U8, F8_E4M3 or F8_E5M2):
     * bytes of another format are never read as these.
     */
    byte[] readBytes(String name, DType expected);

    /**
     * Every file this source reads: the file itself, or the index and each shard it names. A command passes
     * them to {@link org.tornadomla.io.OutputFiles} so that its output never replaces one of them.
     */
    List<Path> files();

    @Override
    void close();

    /**
     * Opens a single {@code .safetensors} file, a {@code model.safetensors.index.json}, or a directory
     * holding either.
     */
    static TensorSource open(Path path) {
        Objects.requireNonNull(path, "path");
        if (Files.isDirectory(path)) {
            Path index = path.resolve("model.safetensors.index.json");
            if (Files.exists(index)) return ShardedSafeTensors.open(index);
            Path single = path.resolve("model.safetensors");
            if (Files.exists(single)) return SafeTensorsFile.open(single);
            throw new MlaException(path + ": directory has neither model.safetensors.index.json nor model.safetensors");
        }
        Path name = path.getFileName();
        if (name != null && name.toString().endsWith(".index.json")) return ShardedSafeTensors.open(path);
        return SafeTensorsFile.open(path);
    }
}
