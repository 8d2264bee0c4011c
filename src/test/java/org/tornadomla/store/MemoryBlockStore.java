package org.tornadomla.store;

import org.tornadomla.MlaException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A {@link BlockStore} in a map, for tests without a server: counts its calls and can be told to fail one. */
final class MemoryBlockStore implements BlockStore {
    final Map<String, byte[]> values = new HashMap<>();
    int exists, gets, puts;
    /** The get (1-based) that fails, 0 for none. */
    int failGet;

    @Override
    public String address() {
        return "memory://test";
    }

    @Override
    public boolean[] exist(List<String> keys) {
        exists++;
        boolean[] out = new boolean[keys.size()];
        for (int i = 0; i < out.length; i++) out[i] = values.containsKey(keys.get(i));
        return out;
    }

    @Override
    public List<byte[]> get(List<String> keys) {
        if (++gets == failGet) throw new MlaException(address() + ": GET of " + keys.size() + " blocks failed: connection lost (test)");
        List<byte[]> out = new ArrayList<>();
        for (String k : keys) out.add(values.containsKey(k) ? values.get(k).clone() : null);
        return out;
    }

    @Override
    public void put(List<String> keys, List<byte[]> v, long ttlMillis) {
        puts++;
        for (int i = 0; i < keys.size(); i++) values.put(keys.get(i), v.get(i).clone());
    }

    @Override
    public void delete(List<String> keys) {
        for (String k : keys) values.remove(k);
    }

    @Override
    public void close() {
    }
}
