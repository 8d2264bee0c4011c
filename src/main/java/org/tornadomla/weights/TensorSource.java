package org.tornadomla.weights;

import org.tornadomla.internal.Messages;
import org.tornadomla.MlaException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** Named tensors read from safetensors: one file, or a sharded checkpoint with an index. */
public interface TensorSource extends AutoCloseable {

    /** The names of every tensor the source holds. */
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
        if (info == null) throw new MlaException("missing tensor " + Messages.quote(name) + " (expected shape " + Messages.shape(shape) + ")");
        info.requireShape(shape);
        return readFloats(name);
    }

    /** The indices N of the layers this source holds tensors of ({@code model.layers.N.…}), ascending. */
    default java.util.SortedSet<Integer> layers() {
        java.util.SortedSet<Integer> out = new java.util.TreeSet<>();
        java.util.regex.Pattern layer = java.util.regex.Pattern.compile("model\\.layers\\.(0|[1-9][0-9]{0,8})\\..*");
        for (String n : names()) {
            java.util.regex.Matcher m = layer.matcher(n);
            if (m.matches()) out.add(Integer.parseInt(m.group(1)));
        }
        return out;
    }

    /**
     * Refuses a layer this source holds no tensor of ({@code model.layers.<layer>.…}) in one line that says which
     * layers it does hold ("holds layer 0", "holds layers 0-3, 7", or none).
     */
    default void requireLayer(int layer) {
        java.util.SortedSet<Integer> held = layers();
        if (held.contains(layer)) return;
        List<Path> files = files();
        String what = files.isEmpty() ? "the weights" : files.get(0).toString();
        throw new MlaException("layer " + layer + ": " + what + " holds no tensor of it (model.layers." + layer + ".*); "
                + (held.isEmpty() ? "it holds no model.layers.N tensor at all" : "it holds " + (held.size() == 1 ? "layer " : "layers ")
                + ranges(held)));
    }

    /** "0-3, 7, 9-10" */
    private static String ranges(java.util.SortedSet<Integer> n) {
        StringBuilder sb = new StringBuilder();
        Integer start = null, prev = null;
        for (int i : n) {
            if (prev != null && i == prev + 1) {
                prev = i;
                continue;
            }
            if (start != null) sb.append(sb.isEmpty() ? "" : ", ").append(start.equals(prev) ? "" + start : start + "-" + prev);
            start = i;
            prev = i;
        }
        if (start != null) sb.append(sb.isEmpty() ? "" : ", ").append(start.equals(prev) ? "" + start : start + "-" + prev);
        return sb.toString();
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

    /** What weights are, for the refusal of a JSON file given in their place. */
    String WEIGHTS_HINT = "a config.json? weights are a .safetensors file, a model.safetensors.index.json or a checkpoint directory";

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
            if (Files.exists(single)) return SafeTensorsFile.open(single, WEIGHTS_HINT);
            throw new MlaException(path + ": directory has neither model.safetensors.index.json nor model.safetensors");
        }
        Path name = path.getFileName();
        if (name != null && name.toString().endsWith(".index.json")) return ShardedSafeTensors.open(path);
        return SafeTensorsFile.open(path, WEIGHTS_HINT);
    }
}
