package org.tornadomla.weights;

import org.tornadomla.internal.Messages;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import org.tornadomla.MlaException;
import org.tornadomla.io.Json;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A sharded checkpoint: {@code model.safetensors.index.json} maps each tensor name to its shard file
 * ({@code "weight_map"}). Shards are opened (mapped) on first use.
 *
 * <p>The index is read as strict JSON of at most {@link Json#MAX_INDEX_BYTES}. A shard name must stay in
 * the index's folder: a relative path without {@code ..}, and its real path (symbolic links followed) inside
 * the real path of that folder, or inside the folder the index file itself really lives in. The second case
 * is the Hugging Face cache, where {@code snapshots/REV/} holds links to {@code ../../blobs/}, index included.
 */
public final class ShardedSafeTensors implements TensorSource {
    private final Path index;
    private final Map<String, Path> weightMap;
    private final Map<Path, SafeTensorsFile> shards = new LinkedHashMap<>();

    private ShardedSafeTensors(Path index, Map<String, Path> weightMap) {
        this.index = index;
        this.weightMap = weightMap;
    }

    /** Opens a sharded checkpoint from its {@code model.safetensors.index.json}; refused, naming the file, when the index or a shard is not as expected. */
    public static ShardedSafeTensors open(Path index) {
        Objects.requireNonNull(index, "index");
        JsonElement root = Json.readFile(index, Json.MAX_INDEX_BYTES, "index");
        JsonElement wm = root.isJsonObject() ? root.getAsJsonObject().get("weight_map") : null;
        if (wm == null || !wm.isJsonObject()) {
            throw new MlaException(index + ": expected an object with a \"weight_map\" object, found " + (root.isJsonObject() ? Json.describe(wm) : Json.describe(root)));
        }
        Path dir = index.toAbsolutePath().normalize().getParent();
        List<Path> roots = allowedRoots(index, dir);
        Map<String, Path> map = new LinkedHashMap<>();
        Map<String, Path> checked = new LinkedHashMap<>();
        for (Map.Entry<String, JsonElement> e : ((JsonObject) wm).entrySet()) {
            String file = Json.string(e.getValue(), index + ": weight_map entry " + Messages.quote(e.getKey()));
            Path shard = checked.get(file);
            if (shard == null) {
                shard = resolveShard(index, dir, roots, file);
                checked.put(file, shard);
            }
            map.put(e.getKey(), shard);
        }
        return new ShardedSafeTensors(index, map);
    }

    /** The real paths shards may live under: the index's folder, and the folder of the index's own real path. */
    private static List<Path> allowedRoots(Path index, Path dir) {
        try {
            return List.of(dir.toRealPath(), index.toRealPath().getParent());
        } catch (IOException e) {
            throw new MlaException("cannot read index " + index + ": " + Messages.reason(e), e);
        }
    }

    private static Path resolveShard(Path index, Path dir, List<Path> roots, String file) {
        String where = index + ": shard " + Messages.quote(file) + " listed in weight_map ";
        Path rel;
        try {
            rel = Path.of(file);
        } catch (InvalidPathException e) {
            throw new MlaException(where + "is not a file name");
        }
        if (file.isEmpty() || rel.isAbsolute() || rel.getRoot() != null) throw new MlaException(where + "must be a file name relative to the index's folder");
        for (Path part : rel) {
            if (part.toString().equals("..")) throw new MlaException(where + "must not leave the index's folder (it contains '..')");
        }
        Path shard = dir.resolve(rel).normalize();
        if (!Files.exists(shard)) throw new MlaException(where + "does not exist");
        if (!Files.isRegularFile(shard)) throw new MlaException(where + "is not a regular file");
        Path real;
        try {
            real = shard.toRealPath();
        } catch (IOException e) {
            throw new MlaException(where + "cannot be read: " + Messages.reason(e), e);
        }
        if (roots.stream().noneMatch(real::startsWith)) {
            throw new MlaException(where + "is a link to " + real + ", outside the index's folder");
        }
        return shard;
    }

    private synchronized SafeTensorsFile shard(String name) {
        Objects.requireNonNull(name, "name");
        Path file = weightMap.get(name);
        if (file == null) return null;
        SafeTensorsFile f = shards.computeIfAbsent(file, SafeTensorsFile::open);
        if (f.info(name) == null) throw new MlaException("index maps tensor " + Messages.quote(name) + " to " + file + ", which has no such tensor");
        return f;
    }

    @Override
    public Set<String> names() {
        return Collections.unmodifiableSet(weightMap.keySet());
    }

    @Override
    public TensorInfo info(String name) {
        SafeTensorsFile f = shard(name);
        return f == null ? null : f.info(name);
    }

    @Override
    public float[] readFloats(String name) {
        SafeTensorsFile f = shard(name);
        if (f == null) throw new MlaException("no tensor " + Messages.quote(name) + " in the index's weight_map");
        return f.readFloats(name);
    }

    @Override
    public byte[] readBytes(String name, DType expected) {
        SafeTensorsFile f = shard(name);
        if (f == null) throw new MlaException("no tensor " + Messages.quote(name) + " in the index's weight_map");
        return f.readBytes(name, expected);
    }

    @Override
    public List<Path> files() {
        List<Path> all = new ArrayList<>();
        all.add(index);
        all.addAll(new LinkedHashSet<>(weightMap.values()));
        return all;
    }

    @Override
    public synchronized void close() {
        for (SafeTensorsFile f : shards.values()) f.close();
        shards.clear();
    }
}
