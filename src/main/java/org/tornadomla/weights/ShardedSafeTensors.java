package org.tornadomla.weights;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import org.tornadomla.MlaException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A sharded checkpoint: {@code model.safetensors.index.json} maps each tensor name to its shard file
 * ({@code "weight_map"}). Shards are opened (mapped) on first use.
 */
public final class ShardedSafeTensors implements TensorSource {
    private final Path dir;
    private final Map<String, String> weightMap;
    private final Map<String, SafeTensorsFile> shards = new LinkedHashMap<>();

    private ShardedSafeTensors(Path dir, Map<String, String> weightMap) {
        this.dir = dir;
        this.weightMap = weightMap;
    }

    public static ShardedSafeTensors open(Path index) {
        String text;
        try {
            text = Files.readString(index, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new MlaException("file not found: " + index);
        } catch (IOException e) {
            throw new MlaException("cannot read " + index + ": " + e.getMessage(), e);
        }
        Map<String, String> map = new LinkedHashMap<>();
        try {
            JsonElement root = JsonParser.parseString(text);
            JsonElement wm = root.isJsonObject() ? root.getAsJsonObject().get("weight_map") : null;
            if (wm == null || !wm.isJsonObject()) throw new MlaException(index + ": expected an object with a \"weight_map\" object");
            for (Map.Entry<String, JsonElement> e : ((JsonObject) wm).entrySet()) {
                if (!e.getValue().isJsonPrimitive()) throw new MlaException(index + ": weight_map entry '" + e.getKey() + "' must be a file name");
                map.put(e.getKey(), e.getValue().getAsString());
            }
        } catch (JsonParseException e) {
            throw new MlaException(index + ": not valid JSON (" + e.getMessage() + ")", e);
        }
        Path dir = index.toAbsolutePath().getParent();
        for (String file : map.values()) {
            if (!Files.isRegularFile(dir.resolve(file))) throw new MlaException(index + ": shard '" + file + "' listed in weight_map does not exist");
        }
        return new ShardedSafeTensors(dir, map);
    }

    private synchronized SafeTensorsFile shard(String name) {
        String file = weightMap.get(name);
        if (file == null) return null;
        SafeTensorsFile f = shards.computeIfAbsent(file, k -> SafeTensorsFile.open(dir.resolve(k)));
        if (f.info(name) == null) throw new MlaException("index maps tensor '" + name + "' to " + file + ", which has no such tensor");
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
        if (f == null) throw new MlaException("no tensor '" + name + "' in the index's weight_map");
        return f.readFloats(name);
    }

    @Override
    public synchronized void close() {
        for (SafeTensorsFile f : shards.values()) f.close();
        shards.clear();
    }
}
